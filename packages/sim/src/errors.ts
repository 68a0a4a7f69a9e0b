/**
 * The errors of `@bobbin/sim`, each with a stable `name`. A failed
 * simulation's error (whatever it is) also carries `repro`, the one line
 * that replays it.
 */
import { BobbinError } from "@bobbin/core";

/**
 * Every task of the simulated world waits and nothing can wake them: no
 * timer is set and no packet is in flight (a task may also wait on something
 * outside the world, such as a real Promise, which the simulation cannot
 * see settle).
 *
 * @example
 * ```ts
 * try { await sim.run(); } catch (e) { if (e instanceof SimDeadlock) console.log(e.message, e.repro); }
 * ```
 * @throws never itself: `sim.run()` rejects with it.
 */
export class SimDeadlock extends BobbinError {
  constructor(
    /** The virtual time it happened at, in seconds. */
    readonly time: number,
    /** Each host and whether it is up. */
    hosts: string,
  ) {
    super(
      `every task of the simulated world waits at t=${time}s and nothing can wake them (no timer, no packet in flight): ${hosts}. ` +
        "Look for a wait nobody ends (a lock, a trigger, a read no peer answers), or a task waiting on something outside the simulation (a real Promise)",
    );
  }
}

/**
 * The simulation reached its time limit (`new Sim({ limit })`, in virtual
 * seconds) before its clients finished: a host keeps the world busy forever
 * (a periodic timer, a retry loop) while the clients wait.
 *
 * @example
 * ```ts
 * const sim = new Sim({ seed: 1, limit: 60 });   // one virtual minute at most
 * ```
 * @throws never itself: `sim.run()` rejects with it.
 */
export class SimTimeLimit extends BobbinError {
  constructor(readonly limit: number) {
    super(
      `the simulation reached its limit of ${limit} virtual seconds before its clients finished; ` +
        "raise it with new Sim({ limit }) if the clients need longer, or look for a task that never lets them finish",
    );
  }
}

/**
 * Code inside the simulated world used a source of nondeterminism the
 * simulation does not control (the real network through `node:net` or
 * `node:dgram`, …). Thrown in the task that used it.
 *
 * @example
 * ```ts
 * // inside a host: net.connect(…) throws Nondeterminism; use @bobbin/unix's connect, which the world serves
 * ```
 * @throws never itself: the patched function throws it.
 */
export class Nondeterminism extends BobbinError {
  constructor(
    /** What was used, e.g. `"net.Socket.connect"`. */
    readonly source: string,
    advice: string,
  ) {
    super(`${source} inside a simulation reaches outside the simulated world, so a run could not be replayed: ${advice}`);
  }
}

/**
 * `check` found a failing run. `repro` replays it with `replay(build, repro)`;
 * `cause` is the run's own error.
 *
 * @example
 * ```ts
 * try { await check(build, { runs: 100 }); } catch (e) { if (e instanceof CheckFailed) await replay(build, e.repro); }
 * ```
 * @throws never itself: `check` rejects with it.
 */
export class CheckFailed extends BobbinError {
  constructor(
    /** The line that replays the failing run. */
    readonly repro: string,
    /** Which run failed (0 is the first). */
    readonly run: number,
    /** How many runs `check` was asked for. */
    readonly runs: number,
    cause: unknown,
  ) {
    super(`run ${run + 1} of ${runs} failed: ${describeError(cause)}\n  replay it with: replay(build, ${JSON.stringify(repro)})`, {
      cause,
    });
  }
}

/** @internal A one-line description of an error. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
