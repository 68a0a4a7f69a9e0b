import dgram from "node:dgram";
import net from "node:net";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { run, sleep } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { Nondeterminism, Sim, simulated } from "../src/index.js";

/** Every global a simulation patches, as it is now. */
function globals(): unknown[] {
  return [
    globalThis.Date,
    Date.now,
    performance.now,
    process.hrtime,
    process.hrtime.bigint,
    Math.random,
    globalThis.crypto.getRandomValues,
    globalThis.crypto.randomUUID,
    globalThis.setTimeout,
    globalThis.setInterval,
    globalThis.setImmediate,
    globalThis.clearTimeout,
    globalThis.clearInterval,
    globalThis.clearImmediate,
    net.Socket.prototype.connect,
    net.Server.prototype.listen,
    dgram.Socket.prototype.bind,
    dgram.Socket.prototype.send,
    process.on,
    process.addListener,
    process.once,
    process.prependListener,
    process.off,
    process.removeListener,
  ];
}

const EPOCH = Date.UTC(2000, 0, 1);

describe("inside the world", () => {
  it("clocks are virtual: Date, performance.now and process.hrtime follow the world's time", async () => {
    const sim = new Sim({ seed: 1 });
    sim.client("c", function* () {
      // biome-ignore lint/complexity/useDateNow: what is checked is `new Date()` itself
      const date = (): number => new Date().valueOf();
      const t0 = [Date.now(), date(), performance.now(), Number(process.hrtime.bigint())];
      yield* sleep(90);
      const t1 = [Date.now(), date(), performance.now(), Number(process.hrtime.bigint()), process.hrtime([0, 0])[0]];
      return [t0, t1, Date(), new Date(5).getTime()];
    });
    const [[t0, t1, text, fixed]] = (await sim.run()) as [[number[], number[], string, number]];
    expect(t0).toEqual([EPOCH, EPOCH, 0, 0]);
    expect(t1).toEqual([EPOCH + 90_000, EPOCH + 90_000, 90_000, 90e9, 90]);
    expect(text).toBe(new Date(EPOCH + 90_000).toString());
    expect(fixed).toBe(5);
  });

  it("timers are virtual: setTimeout, setInterval and setImmediate run on the world's clock", async () => {
    const sim = new Sim({ seed: 1 });
    sim.client("c", function* () {
      const seen: string[] = [];
      const at = (what: string) => () => seen.push(`${what}@${performance.now()}`);
      setTimeout(at("timeout"), 5000);
      const cancelled = setTimeout(at("cancelled"), 1000);
      clearTimeout(cancelled);
      let ticks = 0;
      const interval = setInterval(() => {
        if (++ticks === 3) clearInterval(interval);
        at("tick")();
      }, 2000);
      setImmediate(at("immediate"));
      yield* B.promise(() => new Promise((resolve) => setTimeout(resolve, 10_000)));
      return seen;
    });
    expect(await sim.run()).toEqual([["immediate@0", "tick@2000", "timeout@5000", "tick@4000", "tick@6000"].sort(byTime)]);
  });

  it("a virtual timer's callback that throws fails the run", async () => {
    const sim = new Sim({ seed: 1 });
    sim.client("c", function* () {
      setTimeout(() => {
        throw new Error("from a timer");
      }, 1000);
      yield* sleep(5);
      return "not reached";
    });
    await expect(sim.run()).rejects.toThrow("from a timer");
    expect(sim.now()).toBe(1);
  });

  it("Math.random and crypto draw from the world's generator: the same seed, the same values", async () => {
    const draws = async (seed: number) => {
      const sim = new Sim({ seed });
      sim.client("c", function* () {
        const bytes = crypto.getRandomValues(new Uint8Array(8));
        return [Math.random(), Math.random(), [...bytes], crypto.randomUUID()];
      });
      return (await sim.run())[0] as [number, number, number[], string];
    };
    const a = await draws(5);
    expect(await draws(5)).toEqual(a);
    expect(await draws(6)).not.toEqual(a);
    expect(a[3]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("the real network is refused with Nondeterminism", async () => {
    const sim = new Sim({ seed: 1 });
    sim.client("c", function* () {
      const tries = [() => net.connect(80, "127.0.0.1"), () => net.createServer().listen(0), () => dgram.createSocket("udp4").bind(0)];
      return tries.map((f) => {
        try {
          f();
          return "used";
        } catch (error) {
          return error instanceof Nondeterminism ? (error as Nondeterminism).source : String(error);
        }
      });
    });
    expect(await sim.run()).toEqual([["net.Socket.connect", "net.Server.listen", "dgram.Socket.bind"]]);
  });
});

describe("outside the world", () => {
  it("code that is not the world's sees the real clock, Math.random and timers while a simulation runs", async () => {
    const realStart = Date.now();
    let outside: [number, boolean] | null = null;
    const realTimer = new Promise<void>((resolve) =>
      setTimeout(() => {
        outside = [Date.now(), globalThis.setTimeout !== setTimeoutBefore];
        resolve();
      }, 0),
    );
    const setTimeoutBefore = globalThis.setTimeout;
    const sim = new Sim({ seed: 1 });
    sim.client("c", function* () {
      // Virtual seconds until the real timer has fired: the world must still
      // run then (a fixed number of them can end within its first real
      // millisecond). The scheduler gives Node's loop a turn every slice.
      while (outside === null) yield* sleep(1);
    });
    await sim.run();
    await realTimer;
    expect(outside).not.toBeNull();
    const [now, patched] = outside!;
    expect(patched).toBe(true); // it ran during the simulation…
    expect(now).toBeGreaterThanOrEqual(realStart); // …and saw the real time
    expect(now).toBeLessThanOrEqual(Date.now());
  });
});

describe("the globals come back", () => {
  it("after a run that succeeds, fails, deadlocks or cannot start", async () => {
    const before = globals();
    const ok = new Sim({ seed: 1 });
    ok.client("c", function* () {
      yield* sleep(1);
    });
    await ok.run();
    expect(globals()).toEqual(before);

    const failing = new Sim({ seed: 1 });
    failing.client("c", function* () {
      throw new Error("boom");
    });
    await expect(failing.run()).rejects.toThrow("boom");
    expect(globals()).toEqual(before);

    const stuck = new Sim({ seed: 1 });
    stuck.client("c", function* () {
      yield* new L.Trigger().wait();
    });
    await expect(stuck.run()).rejects.toThrow(/every task of the simulated world waits/);
    expect(globals()).toEqual(before);

    const first = new Sim({ seed: 1 });
    first.client("c", function* () {
      yield* sleep(1);
    });
    const second = new Sim({ seed: 1 });
    const running = first.run();
    await expect(second.run()).rejects.toThrow(/another simulation/);
    await running;
    expect(globals()).toEqual(before);
  });

  it("after a run of @bobbin/unix on the simulated backend, which patches them for that run only", async () => {
    const before = globals();
    const inside = await run(
      function* () {
        const t0 = Date.now();
        yield* sleep(60);
        return [Date.now() - t0, globals().some((g, i) => g !== before[i])];
      },
      { backend: simulated() },
    );
    expect(inside).toEqual([60_000, true]);
    expect(globals()).toEqual(before);
  });
});

function byTime(a: string, b: string): number {
  return Number(a.split("@")[1]) - Number(b.split("@")[1]);
}
