import * as B from "@bobbin/core";
import { failure, thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { BACKEND_METHODS } from "../../src/backend/index.js";
import { run, sleep, Timeout, tcpv4, withTimeout } from "../../src/index.js";
import { VirtualTime } from "./virtual-time.js";

describe("a backend of its own: the README's virtual-time example", () => {
  it("implements every method of the contract", () => {
    const backend = new VirtualTime();
    for (const m of BACKEND_METHODS) expect(typeof (backend as unknown as Record<string, unknown>)[m]).toBe("function");
  });

  it("sleeps an hour in no time, concurrently, and withTimeout uses its clock", async () => {
    let backend: VirtualTime | null = null;
    const t0 = performance.now();
    const result = await run(
      function* () {
        const a = B.spawn(function* () {
          yield* sleep(3600);
          return backend!.now();
        });
        const b = B.spawn(function* () {
          yield* sleep(1800);
          return backend!.now();
        });
        const [ra, rb] = yield* B.awaitAll([a, b]);
        const timedOut = yield* failure(() => withTimeout(60, sleep(120)));
        expect(timedOut).toBeInstanceOf(Timeout);
        return [ra, rb, backend!.now()];
      },
      { backend: () => (backend = new VirtualTime()) },
    );
    expect(result.map((r) => (typeof r === "number" ? r : (r as B.Result<number>).ok && (r as { value: number }).value))).toEqual([
      3_600_000, 1_800_000, 3_660_000,
    ]);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it("a cancelled sleeper leaves its heap", async () => {
    let backend: VirtualTime | null = null;
    await run(
      function* () {
        const t = B.spawn(function* () {
          yield* sleep(10);
        });
        yield* B.yieldNow();
        yield* B.yieldNow();
        expect(backend!.heap.size).toBe(1);
        yield* B.cancel(t);
        expect(backend!.heap.size).toBe(0);
      },
      { backend: () => (backend = new VirtualTime()) },
    );
  });

  it("socket operations of a backend without sockets fail in the task with its error", async () => {
    await run(
      function* () {
        expect((thrownBy(() => tcpv4()) as NodeJS.ErrnoException).code).toBe("ENOTSUP");
      },
      { backend: () => new VirtualTime() },
    );
  });
});
