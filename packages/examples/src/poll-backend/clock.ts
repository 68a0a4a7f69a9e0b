/**
 * Time: `sleep` as a suspension point signalled when its deadline passes,
 * and the callback deadlines `withTimeout` arms. Both live in one
 * `Timers` of `@bobbin/unix` (a deadline heap driven by a single Node
 * timer), so any number of sleepers hold one Node timer, and none once the
 * heap is empty.
 */
import * as B from "@bobbin/core";
import { checkTimeouts, type Deadline, type DeadlineHandle, Timers } from "@bobbin/unix/backend";
import type { Poller } from "./poller.js";

/** A sleeper in the heap: when its time comes, its syscall is ready for the next `select`. */
class Alarm implements Deadline {
  heapIndex = -1;

  constructor(
    readonly at: number,
    private readonly syscall: B.Syscall,
    private readonly poller: Poller,
  ) {}

  fire(): void {
    this.poller.ready(this.syscall);
  }
}

/**
 * The clock of the poll backend: `performance.now()` milliseconds.
 *
 * @example
 * ```ts
 * const clock = new Clock(poller);
 * yield* clock.sleep(50);
 * ```
 * @throws from `sleep`: `Timeout`, `Cancelled`.
 */
export class Clock {
  readonly timers = new Timers();

  constructor(private readonly poller: Poller) {}

  now(): number {
    return performance.now();
  }

  /**
   * Parks the task for `ms` (`Infinity`: until cancelled; 0: until the next
   * `select`, so that every ready task runs first).
   *
   * The one clean-up not left to `select`: a sleeper leaves the heap the
   * moment its task stops waiting (the `finally`), because the heap holds a
   * Node timer that keeps the process alive, and a cancelled task should
   * not keep it armed until the next `select` hears of the cancellation.
   *
   * @throws `Timeout` (in an expired `withTimeout` scope), `Cancelled`.
   */
  *sleep(ms: number): Generator<B.Instruction, void, unknown> {
    checkTimeouts();
    const syscall = B.syscall("sleep");
    const alarm = new Alarm(ms === Infinity ? Infinity : this.now() + ms, syscall, this.poller);
    try {
      yield* B.suspend(syscall, () => (ms <= 0 ? this.poller.ready(syscall) : this.timers.add(alarm)));
    } finally {
      this.timers.remove(alarm); // nothing to do when it fired
    }
  }

  /** Calls `fire` at `at`, from the Node timer's callback (`withTimeout` interrupts its task there). */
  deadline(at: number, fire: () => void): DeadlineHandle {
    const d: Deadline = { at, heapIndex: -1, fire };
    this.timers.add(d);
    return { cancel: () => this.timers.remove(d) };
  }
}
