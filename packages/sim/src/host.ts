/**
 * A simulated host: a name, addresses, a namespace of ports and paths, and a
 * `main` run as a subtree of the world's task tree. A host can crash (its
 * tasks are cancelled, its sockets reset for the peers, its ports freed) and
 * restart (its `main` runs again, from scratch).
 *
 * Each host's subtree hangs under a supervisor task named after the host:
 * the supervisor runs `main`, and cancels it when the host crashes. Any task
 * finds its host by walking up to its supervisor.
 */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { type Family, ipv4Of, ipv6Of } from "./address.js";

/**
 * A host's `main`: a generator function, run as the host's first task (and
 * again at each restart).
 *
 * @example
 * ```ts
 * const server: HostMain<never> = function* () {
 *   const s = tcpv4();
 *   yield* bindAndListen(s, { host: "0.0.0.0", port: 80 });
 *   for (;;) yield* accept(s);
 * };
 * sim.host("web", server);
 * ```
 */
export type HostMain<T = unknown> = () => Generator<B.Instruction, T, unknown>;

/** @internal What became of a host's `main`. */
export type HostOutcome = { readonly ended: false } | { readonly ended: true; readonly result: B.Result<unknown> };

/** @internal The world's side of a host: what its supervisor tells. */
export interface HostEvents {
  /** `main` starts (again). */
  started(host: Host): void;
  /** `main` ended (not by a crash). */
  ended(host: Host, result: B.Result<unknown>): void;
}

/** @internal */
export class Host {
  readonly ipv4: string;
  readonly ipv6: string;
  /** Whether the host is running (not crashed). */
  up = false;
  /** How many times `main` was started. */
  incarnation = 0;
  /** The last outcome of `main`, once it ended. */
  outcome: HostOutcome = { ended: false };
  /** The supervisor task (set when the world starts the host). */
  supervisor: B.Task<unknown> | null = null;
  /** Wakes the supervisor when `main` ends or the host crashes. */
  private over: L.Trigger | null = null;
  private restarting: L.Trigger | null = null;
  /** Where the supervisor is: not started yet, running `main`, or waiting for a restart. */
  private phase: "new" | "running" | "idle" = "new";
  private crashRequested = false;
  private restartRequested = false;

  constructor(
    readonly name: string,
    readonly index: number,
    /** What the host runs; null for the host of a world made for `@bobbin/unix`'s `run`. */
    readonly main: HostMain | null,
    /** A client's result is part of the run's result. */
    readonly client: boolean,
  ) {
    this.ipv4 = ipv4Of(index);
    this.ipv6 = ipv6Of(index);
  }

  /** The host's address in `family`. */
  address(family: Family): string {
    return family === 4 ? this.ipv4 : this.ipv6;
  }

  /** Asks the supervisor to cancel `main`, or not to start it (the network side of the crash is the caller's). */
  requestCrash(): void {
    this.up = false;
    if (this.phase === "idle") return; // main has ended: nothing to cancel
    this.crashRequested = true;
    this.over?.signal();
  }

  /** Asks the supervisor to run `main` again once it is down. */
  requestRestart(): void {
    this.restartRequested = true;
    this.restarting?.signal();
  }

  /**
   * The supervisor: runs `main` until it ends or the host crashes; then
   * waits to be restarted. One trigger wakes it for either (no task of its
   * own watches for the crash, so a host's first steps are its `main`'s).
   */
  *supervise(events: HostEvents): Generator<B.Instruction, never, unknown> {
    for (;;) {
      if (!this.crashRequested) {
        this.phase = "running";
        this.up = true;
        this.incarnation++;
        events.started(this);
        const body = this.main!;
        const over = new L.Trigger();
        const main = B.spawn({ name: body.name || this.name }, runMain, body, over);
        yield* this.park(over, (t) => (this.over = t));
        if (this.crashRequested) yield* B.cancel(main);
        else {
          const result = yield* B.awaitTask(main);
          this.outcome = { ended: true, result };
          events.ended(this, result);
        }
      }
      this.phase = "idle";
      this.crashRequested = false;
      if (!this.restartRequested) yield* this.park(new L.Trigger(), (t) => (this.restarting = t));
      this.restartRequested = false;
    }
  }

  /** Waits on `trigger`, kept with `keep` (and forgotten after) for whoever signals it. */
  private *park(trigger: L.Trigger, keep: (trigger: L.Trigger | null) => void): Generator<B.Instruction, void, unknown> {
    keep(trigger);
    try {
      yield* trigger.wait();
    } finally {
      keep(null);
    }
  }
}

/** A host's `main`, which wakes its supervisor when it ends. */
function* runMain(body: HostMain, over: L.Trigger): Generator<B.Instruction, unknown, unknown> {
  try {
    return yield* body();
  } finally {
    over.signal();
  }
}
