/**
 * The kernel as its parts see it, and what it is handed.
 *
 * The parts that step, cancel and end tasks (fiber.ts, cancellation.ts,
 * ending.ts, guards.ts), the run's life (life.ts) and the loop (loop.ts) act
 * on their kernel through {@link Host}, which kernel.ts's `Kernel` is: so
 * that they sit below it, and the kernel's files import one another one way
 * only. The kernel itself sits below the rest of core, which hands it what it
 * needs of the layers above: the events backend through a {@link Driver},
 * the other domains through a {@link DomainHost}, the exit hooks.
 */

import type { DomainFlight } from "./flight.js";
import type { ExitHook, TickHook } from "./hooks.js";
import type { ReadyQueue } from "./policy.js";
import type { Task, Waiter } from "./task.js";
import type { Tracer } from "./trace.js";

/** @internal The run's life (life.ts), as the kernel's other parts see it. */
export interface HostLife {
  /** Whether the run is over here. */
  readonly done: boolean;
  /** The run fails with `error`: its tasks are cancelled. */
  fail(error: unknown): void;
  /** Code the kernel called but does not own threw `error`: the run fails naming `source`. */
  callbackFailed(source: string, error: unknown): void;
  /** The kernel itself failed: the run settles now. */
  internalError(error: unknown): void;
  /** A task without a parent ended: a system task, or the root. */
  topEnded(task: Task): void;
}

/**
 * @internal The flight recorder (recorder.ts) as the kernel writes to it:
 * each trace point stores its event at `next` itself (see recorder.ts's
 * `FlightRecorder` for what goes where) and moves `next` on, calling
 * `wrapped` when it reaches `capacity`; the loop writes its plain steps'
 * `run` too, and tells it of its other steps, its clock reads and the ends
 * of its slices.
 */
export interface Recorder {
  readonly codes: Float64Array;
  readonly others: Float64Array;
  readonly refs: unknown[];
  next: number;
  readonly capacity: number;
  /** The uid of the task whose step runs (0: none): the waker of what it wakes. */
  stepping: number;
  wrapped(): void;
  /** The task `uid` ends without having started (cancelled before its first step). */
  neverStarted(uid: number): void;
  /** The loop read its clock: `now`. */
  clock(now: number): void;
  /** A step of `task` begins. */
  run(task: Task): void;
  /** A slice of the loop ended. */
  idle(): void;
}

/** @internal What times each step when the run reports blocking steps (watch.ts's `StepWatch`). */
export interface StepWatcher {
  /** Runs one step of `task`, as fiber.ts's `step` does. */
  step(k: Host, task: Task): void;
}

/** @internal What the kernel's parts see of it (see the file comment). */
export interface Host {
  /** The task whose step runs (fiber.ts writes it; see current.ts). */
  current: Task | null;
  readonly ready: ReadyQueue;
  /** The tracer of the current slice; null when nobody listens. */
  readonly tracer: Tracer | null;
  /** The domain's flight recorder, which the trace points write to before they tell the tracer; null when the run keeps none. */
  readonly recorder: Recorder | null;
  readonly tickHooks: TickHook[];
  /** No tick hook, no watch, no task's own async context: a step is `step` alone, after its `run` event when the run keeps a flight recorder (loop.ts). */
  readonly plainSteps: boolean;
  /** Tick hooks or async contexts changed: `plainSteps` follows. */
  stepsChanged(): void;
  /** Times every step when the run reports blocking ones (watch.ts); null otherwise. */
  readonly watch: StepWatcher | null;
  readonly exitHooks: readonly ExitHook[];
  /** Tasks that have not ended yet. */
  readonly liveTasks: number;
  readonly life: HostLife;
  readonly loop: { schedule(): void; readonly isRunning: boolean };
  readonly driver: Driver | null;
  readonly domains: DomainHost | null;
  /** The domain `task` runs on: the kernel's, unless it simulates domains. */
  domainOf(task: Task): number;
  /** The flight recorder's events, in words; null when the run keeps none. */
  flight(): DomainFlight | null;
  /** Node's async contexts of its tasks (`AsyncLocalStorage`: see async-context.ts). */
  readonly asyncContexts: HostAsyncContexts;
  /** The next task's uid. */
  nextUid(): number;
  /** Queues the first step of a task without a parent. */
  adoptTop(task: Task): void;
  /** Queues a task made ready by a cancellation, ahead of ordinary steps. */
  queueUrgent(task: Task): void;
  /** Parks the running task on `waiter`. */
  park(task: Task, waiter: Waiter): void;
  /** Wakes a parked task: its operation resumes with `value`. */
  wake(task: Task, value: unknown): void;
  /** A task ended: the count of live tasks goes down. */
  taskEnded(): void;
  /** A slice of the loop begins. */
  sliceBegins(): void;
}

/** @internal Node's async contexts of a kernel's tasks, as the loop drives them (async-context.ts). */
export interface HostAsyncContexts {
  /** Whether a step must go through `step` (some task has a context of its own). */
  readonly inUse: boolean;
  /** Runs a slice of the loop in the run's context. */
  runSlice(slice: () => void): void;
  /** Runs a step of `task` in its context. */
  step(task: Task): void;
}

/** @internal What waits on the events backend (`Driver.waiting`). */
export const enum Waiting {
  /** Nothing: the loop need not poll. */
  Nothing = 0,
  /** Tasks the backend wakes itself (through `Kernel.wake`), though polling moves it (`Events.pending`). */
  Woken = 1,
  /**
   * Tasks only a poll's answer wakes (syscalls): when a blocking poll
   * answered at once with nothing ready, it is asked again after a turn of
   * Node's loop (where it may hear of readiness from Node's callbacks).
   */
  Polled = 2,
}

/**
 * @internal The events backend as the loop drives it: made by the syscall
 * layer (syscall.ts), which guards the backend's code and keeps its
 * syscalls' counts. Polling wakes tasks through `Kernel.wake`, the kernel's
 * one wake path.
 */
export interface Driver {
  /** Wakes from Node's callbacks run together after the current phase of Node's loop (`Events.batchWakes`). */
  readonly batchWakes: boolean;
  /** What waits on the backend now. */
  waiting(): Waiting;
  /** Polls the backend once; what it reports ready is woken. Returns a Promise when the answer comes later (never rejected). */
  poll(block: boolean): Promise<void> | undefined;
  /** Makes a pending poll settle promptly. */
  interrupt(): void;
  /** The run is over here: the backend hears of what is left and stops. */
  finish(): void;
}

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
