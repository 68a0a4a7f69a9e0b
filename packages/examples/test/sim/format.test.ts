import { CheckFailed, check, ExploreFailed, explore, replay, type Sim } from "@bobbin/sim";
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

  it("replay reproduces it 10 times out of 10, from the shrunk line and from the seed: the same error at the same virtual time, the same trace", async () => {
    const failed = (await check(formatWorld(), { runs: 200, seed: 8 }).catch((e: unknown) => e)) as CheckFailed;
    for (const line of [failed.repro, failed.original]) {
      const runs: string[] = [];
      for (let i = 0; i < 10; i++) {
        let sim: Sim | null = null;
        const error = await replay(
          (s) => {
            sim = s;
            formatWorld()(s);
          },
          line,
          { trace: true },
        ).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(QueueEmpty);
        runs.push(`${sim!.now()}\n${String(sim!.trace())}`);
      }
      expect(new Set(runs).size).toBe(1);
    }
  });

  it("check shrinks the run it found: a strictly smaller schedule, failing the same way", async () => {
    const failed = (await check(formatWorld(), { runs: 200, seed: 8 }).catch((e: unknown) => e)) as CheckFailed;
    expect(failed.original).toMatch(/^seed=\d+ policy=random$/);
    expect(failed.repro).toMatch(/^schedule=/);
    const [was, is] = [failed.originalSize!, failed.size!];
    expect(is.steps).toBeLessThan(was.steps);
    expect(is.preemptions).toBeLessThanOrEqual(was.preemptions);
    expect(failed.cause).toBeInstanceOf(QueueEmpty);
    console.log(`Queue.Empty, shrunk: ${failed.original} (${JSON.stringify(was)}) → ${failed.repro} (${JSON.stringify(is)})`);
  });

  it("explore finds it with no seed at all, and its line replays it", async () => {
    const error = await explore(formatWorld({ clients: 2 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExploreFailed);
    expect((error as ExploreFailed).cause).toBeInstanceOf(QueueEmpty);
    await expect(replay(formatWorld({ clients: 2 }), (error as ExploreFailed).repro)).rejects.toBeInstanceOf(QueueEmpty);
  });

  it("explore runs every schedule of the fixed server, far fewer with the reduction than without", async () => {
    const reduced = await explore(formatWorld({ clients: 2, mutexOut: true }), { bound: 1 });
    expect(reduced.exhausted).toBe(true);
    const runs = reduced.schedules + reduced.pruned;
    const naive = await explore(formatWorld({ clients: 2, mutexOut: true }), { bound: 1, reduce: false, runs: 10 * runs });
    expect(naive.exhausted).toBe(false); // more than ten times as many schedules
    console.log(
      `format, fixed, 2 clients, bound 1: ${reduced.schedules} schedules + ${reduced.pruned} pruned runs; naive: > ${naive.schedules}`,
    );
  });

  it("with the book's fix (printing under mutex_out), the same runs pass", async () => {
    await expect(check(formatWorld({ mutexOut: true }), { runs: 200, seed: 8 })).resolves.toEqual({ runs: 200, seed: 8 });
  });

  it("PCT finds it too", async () => {
    const error = await check(formatWorld(), { runs: 200, seed: 8, policy: "pct" }).catch((e: unknown) => e);
    expect((error as CheckFailed).cause).toBeInstanceOf(QueueEmpty);
  });
});
