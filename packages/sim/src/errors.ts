/**
 * The errors of `@bobbin/sim`, each with a stable `name`. A failed
 * simulation's error (whatever it is) also carries `repro`, the one line
 * that replays it.
 */
import { BobbinError } from "@bobbin/core";
import type { RunSize } from "./size.js";

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
    /**
     * The host the world was stopping, which never stops (its cancelled
     * tasks' cleanup waits): the run was abandoned, leaving its tasks. Null
     * for a deadlock while the world ran.
     */
    readonly stopping: string | null = null,
  ) {
    super(
      stopping === null
        ? `every task of the simulated world waits at t=${time}s and nothing can wake them (no timer, no packet in flight): ${hosts}. ` +
            "Look for a wait nobody ends (a lock, a trigger, a read no peer answers), or a task waiting on something outside the simulation (a real Promise)"
        : `the simulated world was stopping its hosts at t=${time}s and ${stopping} never stops: ` +
            `its cancelled tasks wait and nothing can wake them (no timer, no packet in flight): ${hosts}. ` +
            "The run was abandoned, leaving its tasks (and those of the hosts not stopped yet). " +
            "Look for a finally block that waits on what nobody does once the world stops (a trigger, a lock, a read no peer answers), or on something outside the simulation",
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
  constructor(
    /** The limit, in virtual seconds. */
    readonly limit: number,
    /**
     * The host the world was stopping, which had not stopped by the limit
     * (its cleanup would have run past it): the run was abandoned, leaving
     * its tasks. Null when the limit came before the clients finished.
     */
    readonly stopping: string | null = null,
  ) {
    super(
      stopping === null
        ? `the simulation reached its limit of ${limit} virtual seconds before its clients finished; ` +
            "raise it with new Sim({ limit }) if the clients need longer, or look for a task that never lets them finish"
        : `the simulation reached its limit of ${limit} virtual seconds while stopping its hosts, and ${stopping} had not stopped: ` +
            "the run was abandoned, leaving its tasks (and those of the hosts not stopped yet). " +
            "Look for a finally block that keeps waiting on time (a retry loop), or raise the limit with new Sim({ limit }) if the cleanup needs longer",
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
 * `check` found a failing run, and shrank it. `repro` replays the smallest
 * run that fails the same way (`replay(build, repro)`); `original` is the
 * seed line of the run first found, kept beside it; `cause` is the smallest
 * run's error; `size` and `originalSize` say how big each run was.
 *
 * @example
 * ```ts
 * try { await check(build, { runs: 100 }); } catch (e) { if (e instanceof CheckFailed) await replay(build, e.repro); }
 * ```
 * @throws never itself: `check` rejects with it.
 */
export class CheckFailed extends BobbinError {
  /** The line that replays the smallest failing run found (the first run's, when it was not shrunk). */
  readonly repro: string;
  /** The line that replays the failing run as first found: its seed and policy. */
  readonly original: string;
  /** How big the smallest run is (undefined when it was not shrunk). */
  readonly size: RunSize | undefined;
  /** How big the run first found is (undefined when it was not shrunk). */
  readonly originalSize: RunSize | undefined;

  constructor(
    original: string,
    /** Which run failed (0 is the first). */
    readonly run: number,
    /** How many runs `check` was asked for. */
    readonly runs: number,
    cause: unknown,
    shrunk: { readonly repro: string; readonly error: unknown; readonly size: RunSize; readonly originalSize: RunSize } | null,
  ) {
    const error = shrunk?.error ?? cause;
    const repro = shrunk?.repro ?? original;
    const lines = [
      `run ${run + 1} of ${runs} failed: ${describeError(error)}`,
      `  replay it with: replay(build, ${JSON.stringify(repro)})`,
    ];
    if (shrunk !== null) {
      const [was, is] = [shrunk.originalSize, shrunk.size];
      lines.push(
        `  shrunk from ${original}: ${was.preemptions} → ${is.preemptions} preemptions, ${was.faults} → ${is.faults} faults, ${was.steps} → ${is.steps} steps`,
      );
    }
    super(lines.join("\n"), { cause: error });
    this.repro = repro;
    this.original = original;
    this.size = shrunk?.size;
    this.originalSize = shrunk?.originalSize;
  }
}

/**
 * A schedule `explore` ran failed. `repro` replays it (`replay(build,
 * repro)`), up to the same failure; `cause` is the run's error.
 *
 * @example
 * ```ts
 * try { await explore(build, { bound: 2 }); } catch (e) { if (e instanceof ExploreFailed) await replay(build, e.repro); }
 * ```
 * @throws never itself: `explore` rejects with it.
 */
export class ExploreFailed extends BobbinError {
  constructor(
    /** The line that replays the failing schedule. */
    readonly repro: string,
    /** How many runs `explore` made before this one. */
    readonly runs: number,
    cause: unknown,
  ) {
    super(`schedule ${runs + 1} failed: ${describeError(cause)}\n  replay it with: replay(build, ${JSON.stringify(repro)})`, { cause });
  }
}

/** @internal A one-line description of an error. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
