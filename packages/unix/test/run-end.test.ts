import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { handleCount, thrownBy } from "@bobbin/test-support";
import { describe, expect, it, vi } from "vitest";
import { LibuvBackend, runOnBackend } from "../src/backend/index.js";
import { bindAndListen, DrainTimeout, run, tcpv4 } from "../src/index.js";

/** A libuv backend whose drain never settles. */
class Stuck extends LibuvBackend {
  override drain(): Promise<void> {
    return new Promise<void>(() => undefined);
  }
}

/** A libuv backend whose drain closes what it has, then fails with `error` (at once when `sync`). */
class Failing extends LibuvBackend {
  constructor(
    readonly error: Error,
    readonly sync = false,
  ) {
    super();
  }
  override drain(): Promise<void> {
    if (this.sync) throw this.error;
    return super.drain().then(() => {
      throw this.error;
    });
  }
}

function* one(): Generator<B.Instruction, number, unknown> {
  return 1;
}

/** Waits `ms` real milliseconds. */
const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Gives Node's loop turns until `done()` holds, 10,000 at most (a loaded machine may need many). */
async function turnsUntil(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 10_000 && !done(); turn++) await new Promise((resolve) => setImmediate(resolve));
}

describe("run's end", () => {
  it("fails with DrainTimeout when the backend's drain never settles, within the run's cancelGraceMs, and leaves no timer", async () => {
    const timers = handleCount("Timeout");
    const started = performance.now();
    const error = await run(
      function* () {
        return 1;
      },
      { backend: () => new Stuck(), cancelGraceMs: 50 },
    ).then(
      () => null,
      (e: unknown) => e,
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(error).toBeInstanceOf(DrainTimeout);
    expect(error).toMatchObject({ name: "DrainTimeout", code: "ERR_BOBBIN_DRAIN_TIMEOUT", backend: '"libuv" (Stuck)', graceMs: 50 });
    expect((error as Error).message).toMatch(/"libuv" \(Stuck\): its drain\(\) did not settle within 50 ms .* cancelGraceMs/);
    expect(handleCount("Timeout")).toBe(timers);
  });

  it("bounds the drain by core's default cancelGraceMs when the run gives none (L.runDefaults)", async () => {
    let draining = false;
    class Watched extends Stuck {
      override drain(): Promise<void> {
        draining = true;
        return super.drain();
      }
    }
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      let error: unknown = null;
      void run(one, { backend: () => new Watched() }).catch((e: unknown) => {
        error = e;
      });
      await turnsUntil(() => draining);
      await vi.advanceTimersByTimeAsync(L.runDefaults.cancelGraceMs);
      await turnsUntil(() => error !== null);
      expect(error).toMatchObject({ name: "DrainTimeout", graceMs: L.runDefaults.cancelGraceMs });
    } finally {
      vi.useRealTimers();
    }
  });

  it("still releases the backend's sockets when its drain never settles (its finaliser closed them)", async () => {
    const servers = handleCount("TCPServerWrap");
    await expect(
      run(
        function* () {
          yield* bindAndListen(tcpv4(), { host: "127.0.0.1", port: 0 }); // left open
          expect(handleCount("TCPServerWrap")).toBe(servers + 1);
        },
        { backend: () => new Stuck(), cancelGraceMs: 50 },
      ),
    ).rejects.toBeInstanceOf(DrainTimeout);
    await wait(1);
    expect(handleCount("TCPServerWrap")).toBe(servers);
  });

  it("runOnBackend's end is bounded alike", async () => {
    await expect(runOnBackend(one, { backend: () => new Stuck(), cancelGraceMs: 20 })).rejects.toBeInstanceOf(DrainTimeout);
  });

  it("puts DrainTimeout after the run's own error", async () => {
    const failure = new Error("main failed");
    const error = await run(
      function* () {
        throw failure;
      },
      { backend: () => new Stuck(), cancelGraceMs: 20 },
    ).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(B.Failures);
    const errors = (error as B.Failures).errors;
    expect(errors).toHaveLength(2);
    expect(errors[0]).toBe(failure);
    expect(errors[1]).toBeInstanceOf(DrainTimeout);
  });

  it("a drain that rejects after a run that succeeded fails the run with the drain's error", async () => {
    const drainError = new Error("drain failed");
    for (const sync of [false, true]) {
      await expect(
        run(
          function* () {
            return 1;
          },
          { backend: () => new Failing(drainError, sync) },
        ),
        sync ? "thrown at once" : "rejected",
      ).rejects.toBe(drainError);
    }
  });

  it("a drain that rejects after a run that failed loses neither: Failures, the run's error first", async () => {
    const failure = new Error("main failed");
    const drainError = new Error("drain failed");
    for (const sync of [false, true]) {
      const error = await run(
        function* () {
          throw failure;
        },
        { backend: () => new Failing(drainError, sync) },
      ).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, sync ? "thrown at once" : "rejected").toBeInstanceOf(B.Failures);
      expect((error as B.Failures).errors).toEqual([failure, drainError]);
    }
  });

  it("a run refused at once (a bad option) throws its error, and a drain that rejects later is no unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const hear = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on("unhandledRejection", hear);
    try {
      const thrown = thrownBy(() => run(one, { backend: () => new Failing(new Error("drain failed")), sliceMs: -1 }));
      expect(thrown).toBeInstanceOf(RangeError);
      expect(thrown.message).toMatch(/sliceMs/);
      await wait(5);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", hear);
    }
  });

  it("a run refused at once throws its error with a drain's that throws at once (Failures, the run's first)", () => {
    const drainError = new Error("drain failed");
    const thrown = thrownBy<B.Failures>(() => run(one, { backend: () => new Failing(drainError, true), sliceMs: -1 }));
    expect(thrown).toBeInstanceOf(B.Failures);
    expect(thrown.errors).toEqual([expect.any(RangeError), drainError]);
  });
});
