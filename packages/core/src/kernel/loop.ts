/**
 * The run loop of a domain: a synchronous trampoline over the ready queue.
 *
 * A slice steps ready tasks one after another. When none is ready it polls
 * the events backend with `block = true` (or lets a worker domain take shared
 * work); while syscalls are pending it also polls every `pollEvery` steps
 * with `block = false`, so a busy domain still sees I/O. It hands control back
 * to Node's event loop once the slice has lasted `sliceMs`, so that libuv
 * callbacks, timers and worker messages run. Both are checked every
 * `clockEvery` steps, a count that adapts to how long steps take (up to
 * `pollEvery`), so a slice ends on time whether steps last nanoseconds or
 * milliseconds.
 *
 * Whatever escapes a slice is a bug of the kernel: it settles the run with
 * `InternalError` instead of leaving it hanging.
 */

import { describe } from "../describe.js";
import type { Signal } from "../events.js";
import { Syscall } from "../syscall.js";
import { enterKernel, setCurrent } from "./current.js";
import { step } from "./fiber.js";
import type { Kernel } from "./kernel.js";

/** The longest run of steps without reading the clock. */
const MAX_CLOCK_EVERY = 64;

/** @internal */
export class Loop {
  private running = false;
  private scheduled = false;
  private selectInFlight = false;
  /** Steps between two reads of the clock (see the file comment). */
  private clockEvery = 1;
  private readonly runFn = (): void => this.run();
  /** The backend's `batchWakes`: a wake from a Node callback runs with the rest of that phase's callbacks. */
  private readonly batchWakes: boolean;

  constructor(
    private readonly k: Kernel,
    private readonly pollEvery: number,
    private readonly sliceMs: number,
  ) {
    this.batchWakes = k.events?.batchWakes === true;
  }

  /** Makes sure a slice runs soon; cheap to call again before it does. */
  schedule(): void {
    if (this.running || this.scheduled || this.k.done) return;
    this.scheduled = true;
    if (this.selectInFlight) this.k.interruptSelect();
    if (this.batchWakes) setImmediate(this.runFn);
    else queueMicrotask(this.runFn);
  }

  /** Whether a slice is running right now (a wake-up from a step needs no scheduling). */
  get isRunning(): boolean {
    return this.running;
  }

  private run(): void {
    this.scheduled = false;
    if (this.running || this.k.done) return;
    this.running = true;
    const outer = enterKernel(this.k);
    try {
      this.slice();
    } catch (error) {
      setCurrent(null);
      this.k.internalError(error);
    } finally {
      this.running = false;
      enterKernel(outer);
    }
  }

  private slice(): void {
    const k = this.k;
    const ready = k.ready;
    let lastClock = performance.now();
    const deadline = lastClock + this.sliceMs;
    let sincePoll = 0;
    let untilCheck = this.clockEvery;
    for (;;) {
      const task = ready.shift();
      if (task === undefined) {
        if (k.done) return;
        if (k.domains?.idle()) continue;
        if (!this.pollBlocking()) return;
        continue;
      }
      if (k.tickHooks.length !== 0) k.runTickHooks();
      step(k, task);
      if (--untilCheck !== 0) continue;
      // Every `clockEvery` steps (never more than `pollEvery`): poll when due, and end the slice on time.
      sincePoll += this.clockEvery;
      if (sincePoll >= this.pollEvery) {
        sincePoll = 0;
        if (k.pendingSyscalls !== 0 || k.backendPending()) this.poll(false);
      }
      const now = performance.now();
      if (now > deadline) {
        this.continueAfterNodeTurn();
        return;
      }
      untilCheck = this.adaptClock(now - lastClock);
      lastClock = now;
    }
  }

  /**
   * The next number of steps between clock reads: doubled while `clockEvery`
   * steps take under a quarter of a slice, cut to fit a quarter of a slice
   * when they take longer.
   */
  private adaptClock(elapsed: number): number {
    const budget = this.sliceMs / 4;
    const every = this.clockEvery;
    if (elapsed * 2 <= budget) this.clockEvery = Math.min(every * 2, MAX_CLOCK_EVERY, this.pollEvery);
    else this.clockEvery = Math.max(1, Math.floor((budget * every) / elapsed));
    return this.clockEvery;
  }

  /** Nothing is ready: wait for events. Returns whether to keep looping. */
  private pollBlocking(): boolean {
    const k = this.k;
    if (k.events === null) return false;
    const syscalls = k.pendingSyscalls !== 0 || k.cancelledSyscalls.length !== 0;
    if (!syscalls && !k.backendPending()) return false;
    const keepLooping = this.poll(true);
    if (!keepLooping || !k.ready.isEmpty()) return keepLooping;
    // It answered at once with nothing ready. Asked again right away, a
    // backend that hears of readiness from Node's callbacks would spin with
    // Node's loop stopped: syscalls are polled again after a turn of the loop.
    // Other waits are woken by the backend itself, which schedules a slice.
    if (syscalls) this.continueAfterNodeTurn();
    return false;
  }

  /** Ends the slice and runs the next one after a turn of Node's loop (I/O callbacks, timers, worker messages). */
  private continueAfterNodeTurn(): void {
    if (this.k.done) return;
    this.scheduled = true;
    setImmediate(this.runFn);
  }

  private poll(block: boolean): boolean {
    if (this.selectInFlight) return false;
    const k = this.k;
    let signals: unknown;
    try {
      signals = k.events!.select(block, k.takeCancelledSyscalls());
    } catch (error) {
      k.callbackFailed("the events backend's select", error);
      return true;
    }
    if (signals instanceof Promise) {
      this.selectInFlight = true;
      signals.then(
        (answer: unknown) => this.selectSettled(answer, null),
        (error: unknown) => this.selectSettled(null, error),
      );
      // `select` itself may have woken tasks (a deadline it fired, say): run
      // them, and have the pending select settle so the next one sees them.
      if (k.ready.isEmpty()) return false;
      k.interruptSelect();
      return true;
    }
    applySignals(k, signals);
    return true;
  }

  private selectSettled(answer: unknown, error: unknown): void {
    this.selectInFlight = false;
    try {
      if (error !== null) this.k.callbackFailed("the events backend's select (its Promise)", error);
      else applySignals(this.k, answer);
    } catch (escaped) {
      this.k.internalError(escaped);
    }
    this.schedule();
  }
}

/** Fires the suspension points `select` reported, after checking that they are signals of this domain. */
function applySignals(k: Kernel, signals: unknown): void {
  if (!Array.isArray(signals)) {
    k.callbackFailed("the events backend's select", notSignals(`returned ${describe(signals)}, not an array of signals`));
    return;
  }
  for (let i = 0; i < signals.length; i++) {
    const s: Signal | unknown = signals[i];
    if (!(s instanceof Syscall) || s.kernel !== k) {
      k.callbackFailed("the events backend's select", notSignals(`returned ${describe(s)} at index ${i}, not a signal of this domain`));
      continue;
    }
    s.fire();
  }
}

function notSignals(what: string): TypeError {
  return new TypeError(`select ${what}: return B.signal(s) for the suspension points (B.syscall()) of this domain's tasks`);
}
