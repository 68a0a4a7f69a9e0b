/**
 * Chapter 8's stop condition: a `Condition` and its `Mutex`, which the
 * SIGINT handler broadcasts, and which every server waits on beside
 * `accept` (the book's `condition`, `mutex_sigint` and `stop`).
 *
 * Two departures from the book, both explained where they apply:
 * - a flag under the mutex (`requested`): the book's `or_die` waits on the
 *   condition with no predicate, so a broadcast sent while a server is
 *   between two `accept_or_die` (printing, spawning) would be lost and that
 *   server would never stop; and a `Condition` may wake spuriously;
 * - across domains: OCaml domains share the book's global condition; a
 *   worker thread has its own copy of every module (and `@bobbin/sync`'s
 *   primitives belong to one domain), so each domain has its own
 *   `Shutdown`, linked to the others by a flag in a SharedArrayBuffer that
 *   the SIGINT handler (or a failing server) raises and a relay task of
 *   every domain waits on.
 */
import * as B from "@bobbin/core";
import { Condition, Mutex } from "@bobbin/sync";

/** The part of `Atomics.waitAsync` (ES2024) used here; Node ≥ 16 has it. */
type WaitAsync = (
  view: Int32Array,
  index: number,
  value: number,
) => { async: false; value: "not-equal" | "timed-out" } | { async: true; value: Promise<"ok" | "timed-out"> };

const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/**
 * A flag in shared memory that says "stop" to every domain: make it on
 * dom0, pass it to the parallel servers (it is structured-cloned as a view of
 * the same memory).
 *
 * @example
 * ```ts
 * const flag = stopFlag();
 * B.parallel(serverTask, domains.map(() => ({ ...config, stop: flag })));
 * ```
 */
export function stopFlag(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4));
}

/** A domain's stop condition. */
export class Shutdown {
  /** The book's `mutex_sigint`. */
  readonly mutex = new Mutex();
  /** The book's `condition`. */
  readonly condition = new Condition();
  /** Whether a stop was requested (read and written under `mutex`). */
  requested = false;

  /** `flag`: the run's shared stop flag, if it spans several domains. */
  constructor(readonly flag: Int32Array | null = null) {}

  /**
   * The book's `stop`: marks the stop as requested and wakes every waiter,
   * on this domain and (through the shared flag) on the others.
   *
   * @example
   * ```ts
   * onSignal("SIGINT", function* () { yield* shutdown.request(); });
   * ```
   */
  *request(): Generator<B.Instruction, void, unknown> {
    if (this.flag !== null && Atomics.compareExchange(this.flag, 0, 0, 1) === 0) Atomics.notify(this.flag, 0);
    yield* this.mutex.protect(() => {
      this.requested = true;
      this.condition.broadcast();
    });
  }

  /**
   * The book's `or_die` body: waits until a stop is requested.
   *
   * @example
   * ```ts
   * yield* shutdown.wait();   // then `Die`
   * ```
   */
  *wait(): Generator<B.Instruction, void, unknown> {
    const self = this;
    yield* this.mutex.protect(function* () {
      while (!self.requested) yield* self.condition.wait(self.mutex);
    });
  }

  /**
   * Waits until another domain raises the shared flag,
   * then requests the stop here. Spawn it beside the server; cancel it when
   * the server is done.
   *
   * @example
   * ```ts
   * const relay = B.spawn(() => shutdown.relay());
   * ```
   */
  *relay(): Generator<B.Instruction, void, unknown> {
    const flag = this.flag;
    if (flag === null) return;
    const wait = waitAsync(flag, 0, 0);
    if (wait.async) yield* B.promise(() => wait.value);
    yield* this.request();
  }
}
