import { CheckFailed, check, replay, type Sim } from "@bobbin/sim";
import { describe, expect, it } from "vitest";
import { formatWorld, QueueEmpty } from "../../src/sim/format.js";

describe("chapter 8's Queue.Empty, found and replayed", () => {
  it("check finds the race within its runs, and names the run that replays it", async () => {
    const error = await check(formatWorld(), { runs: 200, seed: 8 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckFailed);
    const failed = error as CheckFailed;
    expect(failed.cause).toBeInstanceOf(QueueEmpty);
    expect(failed.message).toContain("Queue.Empty: Queue.take: the queue is empty");
    expect(failed.message).toContain(`replay(build, "${failed.repro}")`);
  });

  it("replay reproduces it 10 times out of 10: the same error at the same virtual time, the same trace", async () => {
    const failed = (await check(formatWorld(), { runs: 200, seed: 8 }).catch((e: unknown) => e)) as CheckFailed;
    const runs: string[] = [];
    for (let i = 0; i < 10; i++) {
      let sim: Sim | null = null;
      const error = await replay(
        (s) => {
          sim = s;
          formatWorld()(s);
        },
        failed.repro,
        { trace: true },
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(QueueEmpty);
      runs.push(`${sim!.now()}\n${String(sim!.trace())}`);
    }
    expect(new Set(runs).size).toBe(1);
  });

  it("with the book's fix (printing under mutex_out), the same runs pass", async () => {
    await expect(check(formatWorld({ mutexOut: true }), { runs: 200, seed: 8 })).resolves.toEqual({ runs: 200, seed: 8 });
  });

  it("PCT finds it too", async () => {
    const error = await check(formatWorld(), { runs: 200, seed: 8, policy: "pct" }).catch((e: unknown) => e);
    expect((error as CheckFailed).cause).toBeInstanceOf(QueueEmpty);
  });
});
