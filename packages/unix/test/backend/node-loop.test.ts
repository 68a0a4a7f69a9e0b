import * as L from "@bobbin/core/lowlevel";
import { describe, expect, it } from "vitest";
import { NodeLoop } from "../../src/backend/index.js";

describe("NodeLoop", () => {
  it("hands ready points to select, blocks with a Promise settled by a signal or interrupt", async () => {
    const loop = new NodeLoop();
    let syscall: L.Syscall | null = null;
    await L.runKernel(
      function* () {
        syscall = L.syscall("test");
        const s = syscall;
        yield* L.suspend(s, () => setTimeout(() => loop.signal(s), 5));
        return "woken";
      },
      { events: () => loop },
    );
    expect(loop.select(false, [])).toEqual([]);
    const pending = loop.select(true, []);
    expect(pending).toBeInstanceOf(Promise);
    loop.interrupt();
    expect(await pending).toEqual([]);
    const again = loop.select(true, []) as Promise<L.Signal[]>;
    loop.finaliser();
    expect(await again).toEqual([]);
    expect(loop.now()).toBeGreaterThan(0);
  });

  it("a deadline fires through the single timer and can be cancelled", async () => {
    const loop = new NodeLoop();
    const fired: string[] = [];
    loop.deadline(loop.now() + 5, () => fired.push("a"));
    const b = loop.deadline(loop.now() + 5, () => fired.push("b"));
    b.cancel();
    b.cancel();
    await new Promise((r) => setTimeout(r, 30));
    expect(fired).toEqual(["a"]);
    expect(loop.timers.size).toBe(0);
  });
});
