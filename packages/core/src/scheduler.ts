/**
 * One domain's scheduler: a synchronous trampoline over a FIFO run queue.
 *
 * A step resumes one fiber until it completes, parks (`SUSPEND`) or yields
 * (`YIELD`); no Promise or microtask is involved per step. When the run queue
 * is empty the events backend is polled with `block = true`; while syscalls
 * are pending it is also polled every `pollEvery` steps with `block = false`,
 * and the trampoline hands control back to Node's event loop after a bounded
 * time slice so that libuv callbacks, timers and worker messages run.
 *
 * Cancellation and cleanup work go through the `urgent` queue, ahead of
 * ordinary steps.
 */

import { DomainLink } from "./domain-link.js";
import { DomainPool } from "./domain-pool.js";
import { Cancelled, Deadlock, StillHasChildren } from "./errors.js";
import type { Events, Signal } from "./events.js";
import type { TickHooks } from "./hook.js";
import { exitHooks } from "./lifecycle.js";
import { type Instruction, RESUMED, SUSPEND, YIELD } from "./operation.js";
import { Rng } from "./rng.js";
import { RunQueue } from "./run-queue.js";
import type { Syscall } from "./syscall.js";
import { childUids, F, State, Task, unlinkChild } from "./task.js";

/** The task whose fiber is running on this thread, if any. */
export let current: Task | null = null;

/** @internal How a run ended, reported to `run`'s promise. */
export type Settle = (ok: boolean, value: unknown) => void;

/** @internal */
export interface SchedulerOptions {
  readonly domain: number;
  /** How many worker domains the run has (dom0 excluded). */
  readonly workers: number;
  readonly seed: number;
  readonly pollEvery: number;
  readonly sliceMs: number;
  readonly events: Events | null;
  /** Where workers find the events factory again (see `defineEvents`). */
  readonly eventsLocation: { url: string; name: string } | null;
  /** Whether idle worker domains take queued parallel work from busy ones. */
  readonly workSharing: boolean;
}

const NO_FATAL = Symbol("no fatal error");
/** A cancelled task that keeps running this long gets one warning. */
const SWALLOWED_CANCEL_WARNING_MS = 2000;

const live = new Set<Scheduler>();
let deadlockWatch = false;

/**
 * Node's loop is about to drain while a run still waits: nothing can wake its
 * tasks any more (a syscall backend or a promise with real work behind it
 * would hold a handle).
 */
function onBeforeExit(): void {
  for (const sched of live) sched.deadlocked();
}

/** @internal */
export class Scheduler {
  readonly domain: number;
  readonly rng: Rng;
  readonly events: Events | null;
  readonly hooks: TickHooks = { list: [] };
  private readonly queue = new RunQueue<Task>(1024);
  private readonly urgent = new RunQueue<Task>(64);
  private readonly pollEvery: number;
  private readonly sliceMs: number;
  private readonly loopFn = (): void => this.loop();
  private root: Task | null = null;
  private settle: Settle | null = null;
  private fatal: unknown = NO_FATAL;
  private running = false;
  private wakeScheduled = false;
  private selectInFlight = false;
  private done = false;
  /** Tasks parked on a syscall. */
  pendingSyscalls = 0;
  /** Syscalls whose task was cancelled, for the next `select`. */
  cancelledSyscalls: number[] = [];
  /** Tasks that have not ended yet. */
  liveTasks = 0;
  /** This domain's mailbox to the others, made on first need. */
  link: DomainLink | null = null;
  /** Dom0's worker domains, started on the first parallel task. */
  pool: DomainPool | null = null;
  /** In a worker: reports a broken rule to dom0, which fails the run. */
  onFatal: ((error: unknown) => void) | null = null;
  /** In a worker: dom0 says the run is over. */
  onShutdown: (() => void) | null = null;
  /** In a worker: nothing is runnable; returns whether it queued work (work sharing). */
  onIdle: (() => boolean) | null = null;

  constructor(private readonly options: SchedulerOptions) {
    this.domain = options.domain;
    this.rng = new Rng(options.seed + options.domain);
    this.events = options.events;
    this.pollEvery = options.pollEvery;
    this.sliceMs = options.sliceMs;
  }

  /** How many worker domains the run has (dom0 excluded). */
  get workers(): number {
    return this.options.workers;
  }

  /** The mailbox to the other domains; on dom0 the first use starts the workers. */
  domainLink(): DomainLink {
    if (this.link !== null) return this.link;
    const link = new DomainLink(this, this.options.workers);
    this.link = link;
    if (this.domain === 0 && this.options.workers > 0) {
      const { workers, seed, pollEvery, sliceMs, eventsLocation, workSharing } = this.options;
      this.pool = new DomainPool(link, { workers, seed, pollEvery, sliceMs, events: eventsLocation, workSharing }, (error) => {
        this.fail(error);
        this.wake();
      });
    }
    return link;
  }

  /** A worker domain is told to stop. */
  shutdownDomain(): void {
    this.onShutdown?.();
  }

  /** Starts `main` as the root task; `settle` hears how it ended. */
  start(gen: Generator<Instruction, unknown, unknown>, settle: Settle): void {
    const root = new Task(this, null, gen);
    this.root = root;
    this.settle = settle;
    this.liveTasks = 1;
    live.add(this);
    if (!deadlockWatch) {
      deadlockWatch = true;
      process.on("beforeExit", onBeforeExit);
    }
    this.enqueue(root);
    this.wake();
  }

  /** Queues a task for its next step. */
  enqueue(task: Task): void {
    if ((task.flags & F.QUEUED) !== 0) return;
    task.flags |= F.QUEUED;
    this.queue.push(task);
  }

  /** Wakes a parked task with `value` (never `undefined`: use `RESUMED`). */
  resume(task: Task, value: unknown): void {
    task.waiter = null;
    task.resume = value;
    task.flags &= ~(F.THROW | F.YIELDED);
    this.enqueue(task);
    if (!this.running) this.wake();
  }

  /** Wakes a parked task by throwing `error` into its fiber. */
  private resumeThrow(task: Task, error: unknown): void {
    task.waiter = null;
    task.resume = error;
    task.flags = (task.flags | F.THROW) & ~F.YIELDED;
    this.enqueue(task);
    if (!this.running) this.wake();
  }

  /** Whether no task is ready to run. */
  get isIdle(): boolean {
    return this.queue.isEmpty() && this.urgent.isEmpty();
  }

  /** Makes sure the trampoline runs soon (called from outside a step). */
  wake(): void {
    if (this.running || this.wakeScheduled || this.done) return;
    this.wakeScheduled = true;
    if (this.selectInFlight) this.events!.interrupt();
    queueMicrotask(this.loopFn);
  }

  // -- the trampoline ------------------------------------------------------

  private loop(): void {
    this.wakeScheduled = false;
    if (this.running || this.done) return;
    this.running = true;
    const outer = current;
    try {
      this.drain();
    } finally {
      this.running = false;
      current = outer;
    }
  }

  private drain(): void {
    const deadline = performance.now() + this.sliceMs;
    let untilPoll = this.pollEvery;
    const queue = this.queue;
    const urgent = this.urgent;
    for (;;) {
      const task = urgent.isEmpty() ? queue.shift() : urgent.shift();
      if (task === undefined) {
        if (this.done) return;
        if (this.onIdle?.()) continue;
        if (!this.pollBlocking()) return;
        continue;
      }
      if (this.hooks.list.length !== 0) this.runTickHooks();
      const gen = task.gen;
      const flags = task.flags;
      if (gen !== null && (flags & (F.STARTED | F.CANCEL_REQUESTED | F.CANCEL_DELIVERED)) === F.STARTED) {
        this.resumeFiber(task, gen, flags);
      } else this.step(task);
      if (--untilPoll === 0) {
        untilPoll = this.pollEvery;
        if (this.pendingSyscalls !== 0) this.poll(false);
        if (performance.now() > deadline) {
          // Let Node's loop breathe (I/O callbacks, timers, worker messages).
          if (!this.done) {
            this.wakeScheduled = true;
            setImmediate(this.loopFn);
          }
          return;
        }
      }
    }
  }

  /**
   * Resumes a task's fiber until it returns, throws, parks or yields. Every
   * step ends here; a started task with nothing to throw and no cancellation
   * pending comes straight from the trampoline.
   */
  private resumeFiber(task: Task, gen: Generator<Instruction, unknown, unknown>, flags: number): void {
    task.flags = flags & ~(F.QUEUED | F.YIELDED);
    current = task;
    let r: IteratorResult<Instruction, unknown>;
    try {
      r = (flags & F.THROW) !== 0 ? gen.throw(task.resume) : gen.next(task.resume);
    } catch (error) {
      current = null;
      this.bodyEnded(task, false, error);
      return;
    }
    current = null;
    if (r.done === true) {
      this.bodyEnded(task, true, r.value);
      return;
    }
    const instruction = r.value;
    if (instruction === YIELD) {
      task.resume = RESUMED;
      const after = task.flags;
      if ((after & F.QUEUED) === 0) {
        task.flags = (after & ~F.THROW) | F.YIELDED | F.QUEUED;
        this.queue.push(task);
      }
    } else this.afterSuspension(task, instruction);
  }

  /** A step that first starts the fiber or settles a pending cancellation. */
  private step(task: Task): void {
    let flags = task.flags & ~F.QUEUED;
    let gen = task.gen;
    if (gen === null) {
      if ((flags & F.STARTED) !== 0 || task.state !== State.Pending) {
        task.flags = flags;
        return;
      }
      gen = makeGenerator(task, flags);
      flags &= ~(F.ONE_ARG | F.ARGS);
    }
    if ((flags & (F.CANCEL_REQUESTED | F.CANCEL_DELIVERED)) !== 0) flags = this.beforeCancelledStep(task, flags);
    this.resumeFiber(task, gen, flags | F.STARTED);
  }

  /** The fiber parked (or yielded something that is not an instruction). */
  private afterSuspension(task: Task, instruction: Instruction): void {
    if (instruction === SUSPEND) {
      if ((task.flags & (F.CANCEL_REQUESTED | F.CANCEL_DELIVERED)) === F.CANCEL_REQUESTED && task.waiter !== null) {
        this.deliverCancel(task);
      }
    } else {
      this.resumeThrow(
        task,
        new TypeError(
          `task ${task.uid} yielded ${String(instruction)} to the scheduler: use \`yield*\` on ` +
            "operations (yield* B.yieldNow(), yield* B.awaitExn(t)), never a bare `yield`",
        ),
      );
    }
  }

  /**
   * Delivers a cancellation that arrived while the task was queued, unless
   * the resumption carries an operation's result, which must not be lost
   * (then it is delivered at the next suspension point).
   */
  private beforeCancelledStep(task: Task, flags: number): number {
    if ((flags & F.CANCEL_DELIVERED) === 0) {
      if ((flags & (F.STARTED | F.NO_EARLY_CANCEL)) === 0 || (flags & F.YIELDED) !== 0) {
        flags |= F.THROW | F.CANCEL_DELIVERED;
        task.resume = this.cancelledError(task);
      }
    }
    if ((flags & F.CANCEL_DELIVERED) !== 0) this.watchSwallowedCancel(task);
    return flags;
  }

  // -- ending tasks --------------------------------------------------------

  /** The fiber returned (`normal`) or threw. */
  private bodyEnded(task: Task, normal: boolean, value: unknown): void {
    task.gen = null;
    task.waiter = null;
    let state = normal ? State.Resolved : State.Failed;
    if ((task.flags & F.CANCEL_REQUESTED) !== 0) state = State.Cancelled;
    if (state === State.Resolved) {
      if (task.firstChild === null) {
        this.terminate(task, State.Resolved, value);
        return;
      }
      const error = new StillHasChildren(task.uid, childUids(task));
      this.fail(error);
      state = State.Failed;
      value = error;
    }
    this.cancelChildren(task);
    if (task.firstChild === null) {
      this.terminate(task, state, value);
      return;
    }
    task.flags |= F.ENDING;
    task.resume = state;
    task.outcome = value;
  }

  /** A failing task cancels its children and may forget those that ended. */
  private cancelChildren(task: Task): void {
    let child = task.firstChild;
    while (child !== null) {
      const next = child.nextSibling;
      if (child.state !== State.Pending) unlinkChild(task, child);
      else {
        child.flags |= F.CONSUMED;
        this.requestCancel(child);
      }
      child = next;
    }
  }

  /** The task and its whole subtree are over: publish the outcome. */
  private terminate(task: Task, state: number, value: unknown): void {
    if ((task.flags & F.CANCEL_REQUESTED) !== 0) {
      state = State.Cancelled;
      value = task.state === State.Cancelled ? task.outcome : this.cancelledError(task);
    }
    if (exitHooks.length !== 0) {
      for (const hook of exitHooks) {
        let veto: unknown;
        try {
          veto = hook(task, state === State.Resolved ? "resolved" : state === State.Failed ? "failed" : "cancelled");
        } catch (error) {
          veto = error;
        }
        if (veto !== undefined && state === State.Resolved) {
          this.fail(veto);
          state = State.Failed;
          value = veto;
        }
      }
    }
    task.setState(state);
    task.outcome = value;
    task.flags &= ~F.ENDING;
    task.resume = undefined;
    this.liveTasks--;
    const parent = task.parent;
    if (parent === null) {
      this.rootEnded(task);
      return;
    }
    if ((task.flags & F.CONSUMED) !== 0) unlinkChild(parent, task);
    if ((parent.flags & F.ENDING) !== 0) {
      if (parent.firstChild === null) this.terminate(parent, parent.resume as number, parent.outcome);
    } else if ((task.flags & F.JOINED) !== 0) {
      task.flags &= ~F.JOINED;
      parent.waiter?.childEnded?.(parent, task);
    }
    task.extra?.orphans?.ended(task);
  }

  // -- cancellation --------------------------------------------------------

  /**
   * Asks a task to stop: `Cancelled` is thrown into its fiber at its current
   * (or next) suspension point, and its children are cancelled when its body
   * has ended.
   */
  requestCancel(task: Task): void {
    if (task.state !== State.Pending || (task.flags & F.CANCEL_REQUESTED) !== 0) return;
    task.flags |= F.CANCEL_REQUESTED;
    const extra = task.extra;
    if (extra !== null) {
      extra.cancelledAt = performance.now();
      for (let frame = extra.protection; frame !== null; frame = frame.outer) frame.onCancellation?.();
      extra.abort?.abort(this.cancelledError(task));
    }
    if (task.gen !== null && task.waiter !== null) this.deliverCancel(task);
  }

  /** Wakes a parked task by throwing `error` where it waits (see `interrupt`). */
  interrupt(task: Task, error: unknown): void {
    const waiter = task.waiter!;
    task.waiter = null;
    waiter.detach(task);
    this.resumeThrow(task, error);
  }

  private deliverCancel(task: Task): void {
    const waiter = task.waiter!;
    task.waiter = null;
    waiter.detach(task);
    task.flags = (task.flags | F.CANCEL_DELIVERED | F.THROW) & ~F.YIELDED;
    task.resume = this.cancelledError(task);
    if ((task.flags & F.QUEUED) === 0) {
      task.flags |= F.QUEUED;
      this.urgent.push(task);
    }
    if (!this.running) this.wake();
  }

  /** The `Cancelled` a task ends with (one per task, made on first need). */
  private cancelledError(task: Task): Cancelled {
    return task.state === State.Cancelled ? (task.outcome as Cancelled) : new Cancelled(`task ${task.uid} was cancelled`);
  }

  private watchSwallowedCancel(task: Task): void {
    const extra = task.getExtra();
    if (extra.warned) return;
    if (extra.cancelledAt === 0) extra.cancelledAt = performance.now();
    else if (performance.now() - extra.cancelledAt > SWALLOWED_CANCEL_WARNING_MS) {
      extra.warned = true;
      process.emitWarning(
        `task ${task.uid} keeps running ${SWALLOWED_CANCEL_WARNING_MS} ms after it was cancelled: ` +
          "a task that catches Cancelled must clean up and end, or it delays its parent's cancel",
        { code: "BOBBIN_SWALLOWED_CANCEL" },
      );
    }
  }

  /** A broken rule, an aborted `signal`, a deadlock: the whole run is cancelled and fails with `error`. */
  fail(error: unknown): void {
    if (this.fatal !== NO_FATAL) return;
    this.fatal = error;
    // A worker reports to dom0, whose run fails and cancels the calls here.
    if (this.onFatal !== null) this.onFatal(error);
    else if (this.root !== null) this.requestCancel(this.root);
  }

  /** @internal Called on Node's `beforeExit`: nothing can wake this run's tasks. */
  deadlocked(): void {
    if (this.done) return;
    this.fail(new Deadlock(this.liveTasks));
    this.wake();
  }

  private rootEnded(root: Task): void {
    this.done = true;
    live.delete(this);
    if (live.size === 0 && deadlockWatch) {
      deadlockWatch = false;
      process.off("beforeExit", onBeforeExit);
    }
    if (this.events !== null) {
      if (this.cancelledSyscalls.length !== 0) {
        try {
          const last = this.events.select(false, this.takeCancelled());
          if (last instanceof Promise) last.catch(() => undefined);
        } catch {
          // The run is over: a backend failing to hear of cancelled syscalls changes nothing.
        }
      }
      this.events.finaliser?.();
    }
    const settle = this.settle!;
    this.settle = null;
    if (this.fatal !== NO_FATAL) settle(false, this.fatal);
    else settle(root.state === State.Resolved, root.outcome);
  }

  // -- events ---------------------------------------------------------------

  /** The run queue is empty: wait for events. Returns whether to keep looping. */
  private pollBlocking(): boolean {
    if (this.events === null || (this.pendingSyscalls === 0 && this.cancelledSyscalls.length === 0)) return false;
    return this.poll(true);
  }

  private poll(block: boolean): boolean {
    if (this.selectInFlight) return false;
    let signals: Signal[] | Promise<Signal[]>;
    try {
      signals = this.events!.select(block, this.takeCancelled());
    } catch (error) {
      this.fail(error);
      return true;
    }
    if (signals instanceof Promise) {
      this.selectInFlight = true;
      signals.then(
        (ready) => {
          this.selectInFlight = false;
          this.applySignals(ready);
          this.wake();
        },
        (error: unknown) => {
          this.selectInFlight = false;
          this.fail(error);
          this.wake();
        },
      );
      // `select` itself may have woken tasks (a deadline it fired, say): run
      // them, and have the pending select settle so the next one sees them.
      if (this.isIdle) return false;
      this.events!.interrupt();
      return true;
    }
    this.applySignals(signals);
    return true;
  }

  private takeCancelled(): number[] {
    const cancelled = this.cancelledSyscalls;
    if (cancelled.length !== 0) this.cancelledSyscalls = [];
    return cancelled;
  }

  private applySignals(signals: readonly Signal[]): void {
    for (let i = 0; i < signals.length; i++) (signals[i] as unknown as Syscall).fire();
  }

  private runTickHooks(): void {
    const list = this.hooks.list;
    for (let i = 0; i < list.length; i++) {
      const hook = list[i]!;
      try {
        hook.fn();
      } catch (error) {
        list.splice(i--, 1);
        process.emitWarning(`a tick hook threw and was removed: ${String(error)}`, { code: "BOBBIN_HOOK_REMOVED" });
      }
    }
  }
}

/** A spawned task's generator, made at its first step from the body and arguments its record holds. */
function makeGenerator(task: Task, flags: number): Generator<Instruction, unknown, unknown> {
  const body = task.resume as (...args: unknown[]) => Generator<Instruction, unknown, unknown>;
  const args = task.outcome;
  task.outcome = undefined;
  task.resume = undefined;
  const gen = (flags & F.ONE_ARG) !== 0 ? body(args) : (flags & F.ARGS) !== 0 ? body(...(args as unknown[])) : body();
  task.gen = gen;
  return gen;
}

/**
 * @internal The scheduler of the running task. Operations call it; outside a
 * task it explains where they must be used.
 */
export function currentTask(operation: string): Task {
  if (current === null) {
    throw new TypeError(`${operation} must be called from inside a task: start one with B.run(function* () { … })`);
  }
  return current;
}

/** @internal Marks an ended child consumed by its parent and drops it from the child list. */
export function consume(parent: Task, child: Task): void {
  child.flags |= F.CONSUMED;
  if (child.state !== State.Pending) unlinkChild(parent, child);
}

/**
 * @internal Cancels a child for its parent. An ended child becomes
 * `Cancelled` at once (returns true); a live one is asked to stop (returns
 * false: the caller waits for it to end).
 */
export function cancelChild(parent: Task, child: Task): boolean {
  child.flags |= F.CONSUMED;
  if (child.state !== State.Pending) {
    if (child.state !== State.Cancelled) {
      child.setState(State.Cancelled);
      child.outcome = new Cancelled(`task ${child.uid} was cancelled`);
    }
    unlinkChild(parent, child);
    return true;
  }
  child.sched.requestCancel(child);
  return false;
}
