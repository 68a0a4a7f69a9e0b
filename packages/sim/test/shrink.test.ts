import * as B from "@bobbin/core";
import { bindAndListen, recvfrom, sendto, sleep, udpv4 } from "@bobbin/unix";
import { afterEach, describe, expect, it, vi } from "vitest";
import { floatOf, floatValue } from "../src/choices.js";
import { type Build, CheckFailed, check, replay, type Sim } from "../src/index.js";
import { WorldRandom } from "../src/random.js";
import { formatSchedule, parseSchedule } from "../src/schedule.js";
import { flagRace } from "./support/programs.js";

/**
 * A bug that needs one preemption (support/programs.ts's flag race, once
 * the noise and the chaos have begun). Around it, noise: tasks that yield
 * on the same host, a host that sends datagrams to another over lossy
 * links, and a chaos host that partitions them — all of which a random
 * schedule reorders, and the shrinker should drop.
 */
const buggy: Build = (sim) => {
  sim.network({ loss: 0.3 });
  sim.client("flag", flagRace(3, 0.02));
  sim.host("pong", function* () {
    const s = udpv4();
    yield* bindAndListen(s, { host: "0.0.0.0", port: 9 });
    for (;;) yield* recvfrom(s, Buffer.alloc(16));
  });
  sim.host("ping", function* () {
    const s = udpv4();
    for (;;) {
      yield* sendto(s, Buffer.from("ping"), { host: "pong", port: 9 });
      yield* sleep(Math.random() * 0.002);
    }
  });
  sim.host("chaos", function* () {
    for (;;) {
      yield* sleep(Math.random() * 0.004);
      sim.partition("ping", "pong");
      yield* sleep(Math.random() * 0.002);
      sim.repair("ping", "pong");
    }
  });
};

describe("shrinking", () => {
  it("reports a run strictly smaller than the one found, failing the same way, and replay gives it", async () => {
    const failed = (await check(buggy, { runs: 200, seed: 3 }).catch((e: unknown) => e)) as CheckFailed;
    expect(failed).toBeInstanceOf(CheckFailed);
    const [was, is] = [failed.originalSize!, failed.size!];
    expect(is.preemptions).toBeLessThan(was.preemptions);
    expect(is.preemptions).toBe(1); // the bug needs one
    expect(is.faults).toBeLessThan(was.faults);
    expect(is.steps).toBeLessThan(was.steps);
    expect(failed.repro.length).toBeLessThan(40);
    expect(failed.message).toContain(`${was.preemptions} → ${is.preemptions} preemptions`);
    const original = await replay(buggy, failed.original).catch((e: unknown) => e);
    const shrunk = await replay(buggy, failed.repro).catch((e: unknown) => e);
    expect((original as Error).message).toBe("overwritten by other");
    expect((shrunk as Error).message).toBe("overwritten by other");
    expect((failed.cause as Error).message).toBe("overwritten by other");
    expect((shrunk as { repro: string }).repro).toBe(failed.repro);
  }, 60_000); // CPU only (checking and shrinking): 13.5 s with three suites on two cores, near the default 20 s

  it("keeps only a failure of the same kind: a run that fails elsewhere is not smaller", async () => {
    // Two bugs: the first run found fails on `late`, which needs a long sleep; a shorter sleep fails on `early` instead.
    const twoBugs: Build = (sim) => {
      sim.client("c", function* () {
        const pause = Math.random();
        if (pause < 0.3) throw new RangeError("early");
        yield* sleep(pause);
        throw new TypeError("late");
      });
    };
    const failed = (await check(twoBugs, { runs: 50, seed: 1 }).catch((e: unknown) => e)) as CheckFailed;
    const first = await replay(twoBugs, failed.original).catch((e: unknown) => e);
    expect((failed.cause as Error).name).toBe((first as Error).name);
    expect((await replay(twoBugs, failed.repro).catch((e: unknown) => e)) as Error).toBeInstanceOf((first as Error).constructor);
  });

  it("stops a try that never ends (a loop that never draws its failing number again), and keeps what it had", async () => {
    const looping: Build = (sim) => {
      sim.client("c", function* () {
        for (let i = 0; ; i++) {
          const d = Math.random();
          if (d < 0.01) throw new Error(`small draw after ${i}`);
          // a try past its list draws 0.5 forever: the loop never ends, and is stopped
          if (d > 0.99) yield* B.yieldNow();
          else yield* sleep(d * 0.001);
        }
      });
    };
    const failed = (await check(looping, { runs: 5, seed: 1, shrink: 60 }).catch((e: unknown) => e)) as CheckFailed;
    expect(failed.message).toMatch(/small draw after/);
    await expect(replay(looping, failed.repro)).rejects.toThrow(/small draw after/);
  }, 60_000); // CPU only: 15 s with three suites on two cores, near the default 20 s
});

describe("a schedule line", () => {
  afterEach(() => vi.restoreAllMocks());

  it("replays the same run when the random stream changes; a seed line does not", async () => {
    const failed = (await check(buggy, { runs: 200, seed: 3 }).catch((e: unknown) => e)) as CheckFailed;
    const traceOf = async (line: string): Promise<string> => {
      let sim: Sim | null = null;
      const error = await replay(
        (s) => {
          sim = s;
          return buggy(s);
        },
        line,
        { trace: true },
      ).catch((e: unknown) => e);
      return `${String(error)}\n${String(sim!.trace())}`;
    };
    const shrunk = await traceOf(failed.repro);
    const original = await traceOf(failed.original);
    // Another generator: every 32-bit draw of the world's stream is now a different one.
    let state = 0x12345678;
    vi.spyOn(WorldRandom.prototype, "next32").mockImplementation(() => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return state >>> 0;
    });
    expect(await traceOf(failed.repro)).toBe(shrunk);
    expect(await traceOf(failed.original)).not.toBe(original);
  });

  it("writes the choices sparsely: what differs from the first value, and the gaps between", () => {
    expect(formatSchedule({ schedule: [], data: [] })).toBe(".");
    expect(formatSchedule({ schedule: [0, 0, 1, 0, 2], data: [0, 3] })).toBe("CABB.BC");
    const random = new WorldRandom(9);
    for (let i = 0; i < 50; i++) {
      const list = () => Array.from({ length: random.below(40) }, () => (random.chance(0.7) ? 0 : random.below(2 ** 20) + 1));
      const lists = { schedule: list(), data: [...list(), 2 ** 53 - 1] };
      const back = parseSchedule(formatSchedule(lists), "usage");
      // Past its end a list reads as 0s: trailing 0s are not written.
      const trimmed = lists.schedule.slice();
      while (trimmed.at(-1) === 0) trimmed.pop();
      expect(back).toEqual({ schedule: trimmed, data: lists.data });
    }
  });

  it("keeps a number in [0, 1) so that 0.5 is its first value and simple numbers are short", () => {
    expect(floatOf(0)).toBe(0.5);
    expect(floatOf(1)).toBe(0);
    expect([floatOf(2), floatOf(3)]).toEqual([0.75, 0.25]);
    const random = new WorldRandom(4);
    for (let i = 0; i < 100; i++) {
      const bits = random.bits53();
      expect(floatOf(floatValue(bits))).toBe(bits / 2 ** 53);
    }
  });

  it("is checked: a line that is not one, or that does not fit the world, is a TypeError naming the rule", async () => {
    await expect(replay(buggy, "schedule=AB")).rejects.toThrow(/two lists joined by a dot/);
    await expect(replay(buggy, "schedule=g.")).rejects.toThrow(/ends in the middle of a number/);
    await expect(replay(buggy, "schedule=A!.")).rejects.toThrow(/not a base64url character/);
    await expect(replay(buggy, "schedule=. seed=1")).rejects.toThrow(/a schedule line has no seed/);
    await expect(replay(buggy, "schedule=Af.")).rejects.toThrow(/does not fit this world: its step choice 1 is 32, among \d+ ready tasks/);
    const tiny: Build = (sim) => {
      sim.client("c", function* () {
        return 1;
      });
    };
    await expect(replay(tiny, "schedule=AA.")).rejects.toThrow(/the run ended before its schedule did/);
  });
});
