/**
 * The run loop of a domain: a synchronous trampoline over the ready queue.
 *
 * A slice steps ready tasks one after another. When none is ready it polls
 * the events backend with `block = true` (or lets a worker domain take shared
 * work); while tasks wait on the backend it also polls every `pollEvery`
 * steps with `block = false`, so a busy domain still sees I/O. It hands
 * control back to Node's event loop once the slice has lasted `sliceMs`, so
 * that libuv callbacks, timers and worker messages run. Both are checked
 * every `clockEvery` steps, a count that adapts to how long steps take (up to
 * `pollEvery`), so a slice ends on time whether steps last nanoseconds or
 * milliseconds.
 *
 * Tasks are woken one way only, `Kernel.wake` (from an operation, a Node
 * callback, or a poll of the backend): the loop polls through a `Driver`
 * (host.ts) and never learns what woke whom.
 *
 * Whatever escapes a slice is a bug of the kernel: it settles the run with
 * `InternalError` instead of leaving it hanging.
 */

import { enterKernel } from "./current.js";
import { firstOrCancelledStep, onlyResumes, resume, step } from "./fiber.js";
import { runTickHooks } from "./guards.js";
import { type Host, Waiting } from "./host.js";
import { Kind } from "./recorder.js";
import { F } from "./task.js";

/** The longest run of steps without reading the clock (a flight recorder's events take their times from these reads too). */
const MAX_CLOCK_EVERY = 64;

/** @internal */
export class Loop {
  private running = false;
  private scheduled = false;
  private pollInFlight = false;
  /** Steps between two reads of the clock (see the file comment). */
  private clockEvery = 1;
  /** When the running slice is to end (`performance.now()`): `yieldIfDue` yields past it. */
  private deadline = 0;
  /** `yieldIfDue`'s calls left before it reads the clock again, the stride, and when it last did (see `isDue`). */
  private dueIn = 1;
  private dueEvery = 1;
  private lastDue = 0;
  private readonly runFn = (): void => this.run();
  private readonly sliceFn = (): void => this.slice();
  private readonly pollSettledFn = (): void => this.pollSettled();
  /** The backend's `batchWakes`: a wake from a Node callback runs with the rest of that phase's callbacks. */
  private readonly batchWakes: boolean;

  constructor(
    private readonly k: Host,
    private readonly pollEvery: number,
    private readonly sliceMs: number,
  ) {
    this.batchWakes = k.driver?.batchWakes === true;
  }

  /**
   * Whether the running slice is spent (`yieldIfDue`). The clock is read
   * every `dueEvery` calls, a stride that doubles (up to 128) while calls
   * come faster than an eighth of a slice apart and halves when they do not,
   * so that a tight loop pays a fraction of a clock read per call.
   */
  isDue(): boolean {
    if (--this.dueIn > 0) return false;
    const now = performance.now();
    const elapsed = now - this.lastDue;
    this.lastDue = now;
    const budget = this.sliceMs / 8;
    if (elapsed * 2 <= budget) this.dueEvery = Math.min(this.dueEvery * 2, 128);
    else if (elapsed > budget) this.dueEvery = Math.max(1, this.dueEvery >> 1);
    this.dueIn = this.dueEvery;
    return now > this.deadline;
  }

  /** Makes sure a slice runs soon; cheap to call again before it does. */
  schedule(): void {
    if (this.running || this.scheduled || this.k.life.done) return;
    this.scheduled = true;
    if (this.pollInFlight) this.k.driver!.interrupt();
    if (this.batchWakes) setImmediate(this.runFn);
    else queueMicrotask(this.runFn);
  }

  /** Whether a slice is running right now (a wake-up from a step needs no scheduling). */
  get isRunning(): boolean {
    return this.running;
  }

  private run(): void {
    this.scheduled = false;
    if (this.running || this.k.life.done) return;
    this.running = true;
    const outer = enterKernel(this.k);
    try {
      this.k.asyncContexts.runSlice(this.sliceFn);
      this.k.recorder?.idle();
    } catch (error) {
      this.k.current = null;
      this.k.life.internalError(error);
    } finally {
      this.running = false;
      enterKernel(outer);
    }
  }

  private slice(): void {
    const k = this.k;
    const ready = k.ready;
    const driver = k.driver;
    const contexts = k.asyncContexts;
    let lastClock = performance.now();
    const deadline = lastClock + this.sliceMs;
    this.deadline = deadline;
    const watch = k.watch;
    const recorder = k.recorder;
    recorder?.clock(lastClock);
    let sincePoll = 0;
    let untilCheck = this.clockEvery;
    for (;;) {
      const task = ready.shift();
      if (task === undefined) {
        if (k.life.done) return;
        if (k.domains?.idle()) continue;
        if (!this.pollBlocking()) return;
        continue;
      }
      // `=== true`: a compare, where a bare test of a field would test for every falsy value.
      if (k.plainSteps === true) {
        // `step`, written out so that the loop has one call of the resumption whatever the
        // step: the compiler inlines a call only while the code it inlines fits a budget,
        // counting what the callee's own compiled code inlined. Through `step`, whose code
        // took in the paths of a first step and of an end, a program that had spawned
        // many tasks left the loop calling it at every later switch; the resumption alone
        // fits, and the first step, the cold part once tasks run, is the call left out.
        let flags = task.flags;
        // The recorder's `run` event (as recorder.ts's `run` writes it), stored here as the
        // kernel's trace points store theirs, so that a recorder leaves the step as it is:
        // through `step`, which the compiler does not inline here, neither the resumption nor
        // a first step or an end were inlined into the loop (`--trace-turbo-inlining`), which
        // cost a child of spawn + await more than the recorder's stores.
        if (recorder !== null) {
          const uid = task.uid;
          recorder.stepping = uid;
          const i = recorder.next;
          recorder.codes[i] = uid * Kind.Kinds + ((flags & F.STARTED) === 0 ? Kind.RunStart : Kind.Run);
          if (++recorder.next === recorder.capacity) recorder.wrapped();
        }
        if (!onlyResumes(flags)) flags = firstOrCancelledStep(k, task, flags);
        if (flags >= 0) resume(k, task, flags);
      } else {
        if (k.tickHooks.length !== 0) runTickHooks(k);
        if (watch !== null) watch.step(k, task);
        else {
          if (recorder !== null) recorder.run(task);
          if (contexts.inUse) contexts.step(task);
          else step(k, task);
        }
      }
      if (--untilCheck !== 0) continue;
      // Every `clockEvery` steps (never more than `pollEvery`): poll when due, and end the slice on time.
      sincePoll += this.clockEvery;
      if (sincePoll >= this.pollEvery) {
        sincePoll = 0;
        if (driver !== null && driver.waiting() !== Waiting.Nothing) this.poll(false);
      }
      const now = performance.now();
      if (recorder !== null) recorder.clock(now);
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
    const driver = k.driver;
    if (driver === null) return false;
    const waiting = driver.waiting();
    if (waiting === Waiting.Nothing) return false;
    const keepLooping = this.poll(true);
    if (!keepLooping || !k.ready.isEmpty()) return keepLooping;
    // It answered at once with nothing ready. Asked again right away, a
    // backend that hears of readiness from Node's callbacks would spin with
    // Node's loop stopped: syscalls are polled again after a turn of the loop.
    // Other waits are woken by the backend itself, which schedules a slice.
    if (waiting === Waiting.Polled) this.continueAfterNodeTurn();
    return false;
  }

  /** Ends the slice and runs the next one after a turn of Node's loop (I/O callbacks, timers, worker messages). */
  private continueAfterNodeTurn(): void {
    if (this.k.life.done) return;
    this.scheduled = true;
    setImmediate(this.runFn);
  }

  /** Polls the backend; returns whether to keep looping (false while an answer is awaited and nothing is ready). */
  private poll(block: boolean): boolean {
    if (this.pollInFlight) return false;
    const k = this.k;
    const later = k.driver!.poll(block);
    if (later === undefined) return true;
    this.pollInFlight = true;
    later.then(this.pollSettledFn);
    // The poll itself may have woken tasks (a deadline it fired, say): run
    // them, and have the pending poll settle so the next one sees them.
    if (k.ready.isEmpty()) return false;
    k.driver!.interrupt();
    return true;
  }

  private pollSettled(): void {
    this.pollInFlight = false;
    this.schedule();
  }
}
