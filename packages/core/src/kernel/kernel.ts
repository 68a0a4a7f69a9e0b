/**
 * The kernel of a domain: the one owner of its tasks, their tree and its
 * counters. Everything that changes a task's state — spawn, park, wake, join,
 * consume, cancel, end, syscalls — goes through its methods (or the kernel's
 * own files: fiber.ts, tree.ts, cancellation.ts, ending.ts, loop.ts), and
 * development builds check the invariants at each change.
 *
 * The kernel calls code it does not own — `onCancellation` handlers, hooks, a
 * tracer, a scheduling policy, the events backend — inside guards: what
 * escapes fails the run with `CallbackFailed` naming its source. It knows
 * nothing of workers or sockets: other domains reach it through a
 * {@link DomainHost} installed on first use.
 */
import { CallbackFailed, failureOf, InternalError } from "../errors.js";
import type { Events, Uid } from "../events.js";
import type { HookKey } from "../hook.js";
import { invariant } from "./assert.js";
import { cancelledError, requestCancel } from "./cancellation.js";
import { unwatchForDeadlock, watchForDeadlock } from "./deadlock.js";
import { Loop } from "./loop.js";
import { ReadyQueue, type SchedulingPolicy } from "./policy.js";
import type { RandomSource } from "./random.js";
import { F, State, Task, type Waiter } from "./task.js";
import type { TracePoint, Tracer, TraceSource } from "./trace.js";
import { addChild, forgetChild } from "./tree.js";

/** @internal What the other domains of a run need to know (the kernel only keeps it for them). */
export interface RunSetup {
  readonly seed: number;
  readonly pollEvery: number;
  readonly sliceMs: number;
  /** Where workers find the events factory again (see `defineEvents`). */
  readonly eventsLocation: { readonly url: string; readonly name: string } | null;
  /** Whether idle worker domains take queued parallel work from busy ones. */
  readonly workSharing: boolean;
  /** How long a domain may take to end a cancelled call before it is terminated. */
  readonly cancelGraceMs: number;
  /** Whether every domain keeps its tasks' spawn times (for dumps). */
  readonly taskAges: boolean;
  /** Whether the worker domains are simulated on dom0's thread (see domains/simulated.ts). */
  readonly simulateDomains: boolean;
}

/** @internal How a domain's kernel is set up. */
export interface KernelOptions {
  readonly setup: RunSetup;
  readonly domain: number;
  /** How many worker domains the run has (dom0 excluded). */
  readonly workers: number;
  readonly pollEvery: number;
  readonly sliceMs: number;
  readonly events: Events | null;
  readonly random: RandomSource;
  readonly policy: SchedulingPolicy | null;
  /** Which tracer the kernel reports to, slice by slice (null: none, ever). */
  readonly tracing: TraceSource | null;
}

/** @internal How a run ended, reported to `run`'s promise. */
export type Settle = (ok: boolean, value: unknown) => void;

/**
 * @internal What the kernel needs of the other domains, installed by
 * `call`/`parallel` (dom0) or by a worker's entry.
 */
export interface DomainHost {
  /** The domain `task` runs on (simulated domains share one kernel). */
  domainOf(task: Task): number;
  /** Nothing is ready here: returns whether this domain took new work (work sharing). */
  idle(): boolean;
  /** The run fails here: returns true when the failure was handed elsewhere (a worker tells dom0). */
  fatal(error: unknown): boolean;
  /** The root task ended: stops the other domains; resolves once they have. */
  shutdown(): Promise<void>;
}

/** Roots of running kernels, so that a task found outside a step leads to its kernel. */
const kernelOfRoot = new WeakMap<Task, Kernel>();

/**
 * Whether two errors are one failure: the same error, or a copy of it that
 * crossed domains (a worker's error reaches dom0 both as the run's failure
 * and as the outcome of the call it ran), which keeps its class, message and stack.
 */
function sameFailure(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  return a instanceof Error && b instanceof Error && a.name === b.name && a.message === b.message && a.stack === b.stack;
}

/** @internal */
export class Kernel {
  readonly domain: number;
  readonly workers: number;
  readonly setup: RunSetup;
  readonly events: Events | null;
  readonly random: RandomSource;
  readonly ready: ReadyQueue;
  readonly loop: Loop;
  /** The tracer of the current slice (see `sliceBegins`); null when nobody listens. */
  tracer: Tracer | null;
  private readonly tracing: TraceSource | null;
  /** When the run started here (`performance.now()`): the root's age. */
  readonly startedAt = performance.now();
  /** Tick hooks (`Hook.add`), run before every step. */
  readonly tickHooks: HookKey[] = [];
  /** Tasks that have not ended yet. */
  liveTasks = 0;
  /** Tasks parked on a syscall. */
  pendingSyscalls = 0;
  /** Syscalls whose task was cancelled, for the next `select`. */
  cancelledSyscalls: Uid[] = [];
  /** The other domains, once `call`/`parallel` (or a worker's entry) installed them. */
  domains: DomainHost | null = null;
  /** Whether the run is over here (the root ended, or the kernel failed). */
  done = false;
  private nextUid = 1;
  private root: Task | null = null;
  /** System tasks not ended yet (`spawnSystem`): beside the root, cancelled once it has ended. */
  private system: Set<Task> | null = null;
  private settle: Settle | null = null;
  /**
   * The errors the run fails with, in the order they happened: the first
   * cancelled the root; the others (a cleanup that failed meanwhile, a system
   * task, the root's own error) must not be lost either.
   */
  private readonly failures: unknown[] = [];

  constructor(options: KernelOptions) {
    this.domain = options.domain;
    this.workers = options.workers;
    this.setup = options.setup;
    this.events = options.events;
    this.random = options.random;
    this.tracing = options.tracing;
    this.tracer = options.tracing?.current() ?? null;
    this.ready = new ReadyQueue(options.policy, (error) => this.callbackFailed("the scheduling policy", error));
    this.loop = new Loop(this, options.pollEvery, options.sliceMs);
  }

  /** The kernel a task belongs to (walks up to its root). */
  static of(task: Task): Kernel | null {
    let root = task;
    while (root.parent !== null) root = root.parent;
    return kernelOfRoot.get(root) ?? null;
  }

  /** The domain `task` runs on: this kernel's, unless its domains are simulated here (domains/simulated.ts). */
  domainOf(task: Task): number {
    return this.domains === null ? this.domain : this.domains.domainOf(task);
  }

  /** A slice of the loop begins (current.ts): the tracer follows who listens now. */
  sliceBegins(): void {
    if (this.tracing !== null) this.tracer = this.tracing.current();
  }

  /** The tasks without a parent: the root, then the system tasks not ended yet (for diagnostics). */
  topTasks(): Task[] {
    const root = this.root;
    const tops = root === null ? [] : [root];
    if (this.system !== null) tops.push(...this.system);
    return tops;
  }

  // -- the run ---------------------------------------------------------------

  /** Starts the root task (its body, or its generator already made); `settle` hears how the run ended. */
  start(gen: Task["gen"], settle: Settle): Task {
    const root = new Task(this.nextUid++, null, gen, 0, undefined);
    this.root = root;
    this.settle = settle;
    this.liveTasks = 1;
    kernelOfRoot.set(root, this);
    watchForDeadlock(this);
    this.enqueue(root);
    this.loop.schedule();
    return root;
  }

  /**
   * Starts a system task (`spawnSystem`): parentless, beside the root. Its
   * failure fails the run; once the root has ended it is cancelled, and the
   * run ends with the last of them.
   */
  startSystem(gen: Task["gen"]): Task {
    const task = new Task(this.nextUid++, null, gen, 0, undefined);
    (this.system ??= new Set()).add(task);
    kernelOfRoot.set(task, this);
    this.liveTasks++;
    this.enqueue(task);
    if ((this.root!.flags & F.STATE) !== State.Pending) requestCancel(this, task);
    this.loop.schedule();
    return task;
  }

  /** Whether the run has failed: its tasks are being cancelled, or have been. */
  get failing(): boolean {
    return this.failures.length !== 0;
  }

  /**
   * A broken rule, an aborted `signal`, a deadlock: the whole run is
   * cancelled and fails with `error` (and with the errors that follow it).
   */
  fail(error: unknown): void {
    const first = this.failures.length === 0;
    // Once the run is over here, only a first failure can still decide it:
    // what comes later is a worker's copy of a failure it reported already.
    if ((this.done && !first) || !this.record(error)) return;
    if (this.domains?.fatal(error)) return;
    if (!first) return;
    if (this.root !== null) requestCancel(this, this.root);
    this.loop.schedule();
  }

  /** Adds `error` to the run's failures; false when it (or a copy of it) is there already. */
  private record(error: unknown): boolean {
    if (this.failures.some((known) => sameFailure(known, error))) return false;
    this.failures.push(error);
    return true;
  }

  /**
   * A run that failed with `error` (a deadlock) but whose tasks cannot end:
   * cancelling them did not break their cycle (a wait that cannot be
   * interrupted twice). Settle it now, leaving them, rather than never.
   */
  abandon(error: unknown): void {
    if (this.settle === null || this.done) return;
    this.record(error);
    this.done = true;
    this.finish();
  }

  /**
   * Code the kernel called but does not own threw `error`: the run fails
   * naming `source` (once: a source that keeps failing, as a policy asked at
   * every step may, is the same bug).
   */
  callbackFailed(source: string, error: unknown): void {
    if (!this.failedAlready(source)) this.fail(new CallbackFailed(source, error));
  }

  /** As `callbackFailed`, once the run is over here (the root ended): the error joins the run's failures. */
  private callbackFailedAtEnd(source: string, error: unknown): void {
    if (!this.failedAlready(source)) this.failures.push(new CallbackFailed(source, error));
  }

  private failedAlready(source: string): boolean {
    return this.failures.some((f) => f instanceof CallbackFailed && f.source === source);
  }

  /** The kernel itself failed: settle the run now rather than leave it hanging. */
  internalError(error: unknown): void {
    if (this.settle === null) return;
    this.record(error instanceof InternalError ? error : new InternalError(error));
    this.done = true;
    this.finish();
  }

  /**
   * @internal A task without a parent ended: a system task, or the root. The
   * run is over here once the root and every system task have ended.
   */
  topEnded(task: Task): void {
    const system = this.system;
    const root = this.root!;
    if (task !== root) {
      system!.delete(task);
      if ((task.flags & F.STATE) === State.Failed) this.fail(task.value);
      if ((root.flags & F.STATE) !== State.Pending && system!.size === 0) this.rootEnded();
      return;
    }
    // Recorded now: the system tasks' cleanup, which comes next, may fail too.
    const state: State = root.flags & F.STATE;
    if (state === State.Failed || (state === State.Cancelled && this.failures.length === 0)) this.record(root.value);
    if (system !== null && system.size !== 0) {
      for (const t of system) requestCancel(this, t);
    } else this.rootEnded();
  }

  /** The root task ended, and no system task is left: the run is over here. */
  private rootEnded(): void {
    this.done = true;
    const events = this.events;
    if (events !== null) {
      if (this.cancelledSyscalls.length !== 0) {
        try {
          const last = events.select(false, this.takeCancelledSyscalls());
          if (last instanceof Promise) last.catch(() => undefined);
        } catch (error) {
          this.callbackFailedAtEnd("the events backend's select", error);
        }
      }
    }
    this.finish();
  }

  /** Stops the backend and the other domains, then settles the run. */
  private finish(): void {
    unwatchForDeadlock(this);
    const finaliser = this.events?.finaliser;
    if (finaliser !== undefined) {
      try {
        finaliser.call(this.events);
      } catch (error) {
        this.callbackFailedAtEnd("the events backend's finaliser", error);
      }
    }
    const settle = this.settle!;
    this.settle = null;
    const failures = this.failures;
    const report = (): void => (failures.length === 0 ? settle(true, this.root!.value) : settle(false, failureOf(failures)));
    if (this.domains === null) report();
    else this.domains.shutdown().then(report, report);
  }

  // -- tasks -------------------------------------------------------------------

  /** A new task of `parent`, not yet in the tree (spawn hooks may still refuse it). */
  create(parent: Task, gen: Task["gen"], flags: number, value: unknown): Task {
    return new Task(this.nextUid++, parent, gen, flags, value);
  }

  /** Puts a task made by `create` into the tree and queues its first step. */
  adopt(parent: Task, child: Task): void {
    addChild(parent, child);
    this.liveTasks++;
    if (this.tracer !== null) this.trace("spawn", child, parent);
    this.enqueue(child);
  }

  /** Parks the running `task` on `waiter` (the operation then returns `SUSPENDED`). */
  park(task: Task, waiter: Waiter): void {
    if (__BOBBIN_DEV__) invariant((task.flags & (F.PARKED | F.QUEUED | F.STATE)) === 0, `${task} parks while parked, queued or ended`);
    task.flags |= F.PARKED;
    task.value = waiter;
  }

  /** Whether `task` is parked (on anything). */
  isParked(task: Task): boolean {
    return (task.flags & F.PARKED) !== 0;
  }

  /** What a parked task waits on, or null. */
  waiterOf(task: Task): Waiter | null {
    return (task.flags & F.PARKED) !== 0 ? (task.value as Waiter) : null;
  }

  /** Wakes a parked task: its operation resumes with `value` (never `undefined`: use `RESUMED`). */
  wake(task: Task, value: unknown): void {
    if (__BOBBIN_DEV__) invariant((task.flags & F.PARKED) !== 0, `${task} is woken while not parked`);
    task.flags &= ~(F.PARKED | F.THROW | F.YIELDED);
    task.value = value;
    this.woken(task);
  }

  /** Wakes a parked task by throwing `error` where it waits. */
  wakeWithError(task: Task, error: unknown): void {
    if (__BOBBIN_DEV__) invariant((task.flags & F.PARKED) !== 0, `${task} is woken while not parked`);
    task.flags = (task.flags & ~(F.PARKED | F.YIELDED)) | F.THROW;
    task.value = error;
    this.woken(task);
  }

  /** Queues a task that stopped without parking (it yielded something that is not an instruction) with an error to throw. */
  requeueWithError(task: Task, error: unknown): void {
    task.flags = (task.flags & ~F.YIELDED) | F.THROW;
    task.value = error;
    this.enqueue(task);
  }

  /**
   * Wakes a parked task with `error` without cancelling it (`B.interrupt`):
   * its waiter forgets it first. Returns false when it is not parked.
   */
  interrupt(task: Task, error: unknown): boolean {
    if ((task.flags & F.PARKED) === 0 || (task.flags & F.STATE) !== State.Pending) return false;
    const waiter = task.value as Waiter;
    task.flags &= ~F.PARKED;
    this.detach(task, waiter);
    task.flags = (task.flags & ~F.YIELDED) | F.THROW;
    task.value = error;
    this.woken(task);
    return true;
  }

  /** Tells a waiter that its task leaves (cancelled or interrupted); a waiter that throws fails the run. */
  detach(task: Task, waiter: Waiter): void {
    try {
      waiter.detach(this, task);
    } catch (error) {
      this.callbackFailed(`the operation ${task} waited on, when it was woken to leave`, error);
    }
  }

  /** Queues a task ahead of ordinary steps (cancellation and cleanup). */
  queueUrgent(task: Task): void {
    if ((task.flags & F.QUEUED) === 0) {
      task.flags |= F.QUEUED;
      this.ready.pushUrgent(task);
    }
    this.loop.schedule();
  }

  private woken(task: Task): void {
    if (this.tracer !== null) this.trace("resume", task);
    this.enqueue(task);
    if (!this.loop.isRunning) this.loop.schedule();
  }

  private enqueue(task: Task): void {
    if ((task.flags & F.QUEUED) !== 0) return;
    task.flags |= F.QUEUED;
    this.ready.push(task);
  }

  // -- the tree ----------------------------------------------------------------

  /** The parent waits for `child` to end (its waiter's `childEnded` hears of it). */
  join(child: Task): void {
    child.flags |= F.JOINED;
  }

  /** The parent stops waiting for `child`. */
  unjoin(child: Task): void {
    child.flags &= ~F.JOINED;
  }

  /** The parent took `child`'s outcome (or gave it up): the child leaves the tree once ended. */
  consume(parent: Task, child: Task): void {
    const flags = child.flags;
    if ((flags & F.CONSUMED) !== 0) return;
    child.flags = flags | F.CONSUMED;
    if ((flags & F.STATE) !== State.Pending) forgetChild(parent, child);
  }

  /**
   * Cancels a child for its parent. An ended child becomes `Cancelled` at
   * once (returns true); a live one is asked to stop (returns false: the
   * caller waits for it to end).
   */
  cancelChild(parent: Task, child: Task): boolean {
    if ((child.flags & F.STATE) !== State.Pending) {
      if ((child.flags & F.STATE) !== State.Cancelled) {
        child.flags = (child.flags & ~F.STATE) | State.Cancelled;
        child.value = cancelledError(child);
      }
      this.consume(parent, child);
      return true;
    }
    child.flags |= F.CONSUMED;
    requestCancel(this, child);
    return false;
  }

  /** Asks a task to stop (a worker cancelling a call it runs). */
  requestCancel(task: Task): void {
    requestCancel(this, task);
  }

  // -- syscalls ----------------------------------------------------------------

  /** A task parked on a syscall. */
  syscallParked(): void {
    this.pendingSyscalls++;
  }

  /** A parked syscall's signal came back: its task is woken by the caller. */
  syscallFired(): void {
    this.pendingSyscalls--;
  }

  /** A syscall's task was cancelled while parked on it: the next `select` hears of it. */
  syscallCancelled(uid: Uid): void {
    this.pendingSyscalls--;
    this.cancelledSyscalls.push(uid);
  }

  /** The cancelled syscalls for `select`, each reported once. */
  takeCancelledSyscalls(): Uid[] {
    const cancelled = this.cancelledSyscalls;
    if (cancelled.length !== 0) this.cancelledSyscalls = [];
    return cancelled;
  }

  /** Whether the backend has tasks waiting on it other than through syscalls (`Events.pending`); one that throws fails the run. */
  backendPending(): boolean {
    const events = this.events;
    if (events === null || events.pending === undefined) return false;
    try {
      return events.pending() === true;
    } catch (error) {
      this.callbackFailed("the events backend's pending", error);
      return false;
    }
  }

  /** Makes a pending Promise-returning `select` settle early. */
  interruptSelect(): void {
    try {
      this.events!.interrupt();
    } catch (error) {
      this.callbackFailed("the events backend's interrupt", error);
    }
  }

  // -- foreign code --------------------------------------------------------------

  /** Runs the tick hooks; one that throws is removed and fails the run. */
  runTickHooks(): void {
    const hooks = this.tickHooks;
    for (let i = 0; i < hooks.length; i++) {
      const hook = hooks[i]!;
      try {
        hook.fn();
      } catch (error) {
        hooks.splice(i--, 1);
        this.callbackFailed(`the tick hook ${hook.fn.name || "(anonymous)"} (Hook.add)`, error);
      }
    }
  }

  /** Reports a trace point to the tracer (call only when `tracer` is set). */
  trace(point: TracePoint, task: Task, parent?: Task): void {
    const tracer = this.tracer!;
    try {
      if (point === "spawn") tracer.spawn?.(task, parent!);
      else tracer[point]?.(task);
    } catch (error) {
      this.callbackFailed(`the tracer's ${point}`, error);
    }
  }
}
