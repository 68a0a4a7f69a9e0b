/**
 * The kernel of a domain: the one owner of its tasks, their tree and its
 * counters. Everything that changes a task — spawn, park, wake, join,
 * consume, cancel, end — goes through its methods (or the kernel's own files:
 * fiber.ts, tree.ts, cancellation.ts, ending.ts), each a transition of
 * state.ts, where development builds check it.
 *
 * Its concerns live in their own files, which see it as a `Host` (host.ts)
 * and import one another one way only: this one keeps the tasks, the tree
 * and parking; life.ts the run's life (root, failures, settling); loop.ts the
 * slices, and the polling of the events backend through a driver; guards.ts
 * the code it calls but does not own. It imports nothing of the layers above
 * it: what it needs of them — the events backend's driver (made by
 * syscall.ts), the exit hooks, the other domains — is handed to it (see
 * `KernelOptions`, `domains`).
 */
import type { Events } from "../events.js";
import { broken } from "./assert.js";
import { AsyncContexts } from "./async-context.js";
import { BlockingWatch } from "./blocking.js";
import { cancelledError, requestCancel, waitsForChildren } from "./cancellation.js";
import type { RunConfig } from "./config.js";
import { currentTask, registers } from "./current.js";
import type { DomainFlight } from "./flight.js";
import { detach, trace } from "./guards.js";
import type { ExitHook, TickHook } from "./hooks.js";
import type { DomainHost, Driver, Host } from "./host.js";
import { RunLife } from "./life.js";
import { Loop } from "./loop.js";
import { Parking } from "./park.js";
import { type ReadyQueue, readyQueue, type SchedulingPolicy } from "./policy.js";
import type { RandomSource } from "./random.js";
import { type FlightRecorder, Kind } from "./recorder.js";
import {
  flagsAtSpawn,
  hasFailed,
  isPending,
  outcomeOf,
  toCancelledAfterEnd,
  toConsumed,
  toInterrupted,
  toJoined,
  toParked,
  toQueued,
  toUnjoined,
  toWoken,
  wasCancelled,
  watchesCancel,
} from "./state.js";
import { Task, type Waiter } from "./task.js";
import type { Tracer, TraceSource } from "./trace.js";
import { Traces } from "./traces.js";
import { addChild, consumeChild } from "./tree.js";
import { StepWatch } from "./watch.js";

/** @internal How a domain's kernel is set up, and what it is handed by the layers above it. */
export interface KernelOptions {
  readonly config: RunConfig;
  readonly domain: number;
  /** This domain's events backend, if the run has one. */
  readonly events: Events | null;
  /** Connects the events backend to the loop (the syscall layer, syscall.ts). */
  readonly drive: (kernel: Kernel, events: Events) => Driver;
  readonly random: RandomSource;
  readonly policy: SchedulingPolicy | null;
  /**
   * Which tracer the kernel reports to, slice by slice (null: none, ever),
   * and the domain's flight recorder, which the kernel tells itself
   * (null: the run does not record).
   */
  readonly tracing: (TraceSource & { readonly recorder: FlightRecorder | null }) | null;
  /** The exit hooks of this thread (`onExit`), read as they are at each end. */
  readonly exitHooks: readonly ExitHook[];
}

/** @internal How a task is spawned (`Kernel.create`). */
export interface SpawnMode {
  /**
   * Runs to its first suspension even when cancelled before its first step:
   * a parallel task's proxy, which must tell the other domain.
   */
  readonly runsToFirstSuspension: boolean;
}

const ORDINARY: SpawnMode = { runsToFirstSuspension: false };

/** Tasks without a parent of running kernels, so that a task found outside a step leads to its kernel. */
const kernelOfTop = new WeakMap<Task, Kernel>();

/** @internal */
export class Kernel implements Host {
  readonly domain: number;
  readonly config: RunConfig;
  readonly events: Events | null;
  /** The events backend as the loop drives it; null when the run has none. */
  readonly driver: Driver | null;
  readonly random: RandomSource;
  readonly exitHooks: readonly ExitHook[];
  readonly ready: ReadyQueue;
  readonly loop: Loop;
  readonly life: RunLife;
  /** The tracer of the current slice (see `sliceBegins`); null when nobody listens. */
  tracer: Tracer | null;
  private readonly tracing: TraceSource | null;
  /** This domain's flight recorder, when the run keeps one (`flightRecorder`). */
  readonly recorder: FlightRecorder | null;
  readonly watch: StepWatch | null;
  /** When the run started here (`performance.now()`): the root's age. */
  readonly startedAt = performance.now();
  /** Tick hooks (`Hook.add`), run before every step. */
  readonly tickHooks: TickHook[] = [];
  /** Whether a step needs nothing around it (see `stepsChanged`). */
  plainSteps = false;
  /** Tasks that have not ended yet. */
  liveTasks = 0;
  /** The task whose step runs, if any (see current.ts). */
  current: Task | null = null;
  /** The other domains, once `call`/`parallel` (or a worker's entry) installed them. */
  domains: DomainHost | null = null;
  readonly asyncContexts: AsyncContexts;
  /** What its tasks parked by `L.park` wait on (park.ts). */
  readonly parking: Parking = new Parking(this);
  /** Where tasks were spawned and suspended; null when the run keeps no traces. */
  readonly traces: Traces | null;
  private lastUid = 0;

  constructor(options: KernelOptions) {
    this.domain = options.domain;
    this.config = options.config;
    this.events = options.events;
    this.random = options.random;
    this.exitHooks = options.exitHooks;
    this.tracing = options.tracing;
    this.tracer = options.tracing?.current() ?? null;
    this.recorder = options.tracing?.recorder ?? null;
    const blocking = options.config.blockingMs === 0 ? null : new BlockingWatch(options.config.blockingMs, (task) => this.domainOf(task));
    this.watch = blocking === null ? null : new StepWatch(this.recorder, blocking);
    this.life = new RunLife(this);
    this.asyncContexts = new AsyncContexts(this);
    this.traces = options.config.traces ? new Traces() : null;
    this.ready = readyQueue(options.policy, (error) => this.life.callbackFailed("the scheduling policy", error));
    this.driver = options.events === null ? null : options.drive(this, options.events);
    this.loop = new Loop(this, options.config.pollEvery, options.config.sliceMs);
    this.stepsChanged();
  }

  /**
   * A tick hook came or went, or a task's async context came into use: the
   * loop's steps need nothing around them while there is no tick hook, no
   * watch and no such context (a flight recorder's `run` event the loop
   * writes itself, a few stores), which the loop then learns
   * from one field per step rather than from each of them.
   */
  stepsChanged(): void {
    this.plainSteps = this.watch === null && this.tickHooks.length === 0 && !this.asyncContexts.inUse;
  }

  /** The kernel a task belongs to (walks up to its root). */
  static of(task: Task): Kernel | null {
    let top = task;
    while (top.parent !== null) top = top.parent;
    return kernelOfTop.get(top) ?? null;
  }

  /** How many worker domains the run has (dom0 excluded). */
  get workers(): number {
    return this.config.workers;
  }

  /** The domain `task` runs on: this kernel's, unless its domains are simulated here (domains/simulated.ts). */
  domainOf(task: Task): number {
    return this.domains === null ? this.domain : this.domains.domainOf(task);
  }

  /** A slice of the loop begins (current.ts): the tracer follows who listens now. */
  sliceBegins(): void {
    if (this.tracing !== null) this.tracer = this.tracing.current();
  }

  flight(): DomainFlight | null {
    return this.recorder?.flight(this.domain, (task) => this.domainOf(task), this.life.topTasks()) ?? null;
  }

  /** The next task's uid: increasing in spawn order, the root's is 1. */
  nextUid(): number {
    return ++this.lastUid;
  }

  // -- tasks ---------------------------------------------------------------------

  /**
   * A new task of `parent` running `body` on `argc` arguments — none, the one
   * in `args`, or several in `args` as an array — or a generator made already
   * (no arguments); not yet in the tree: spawn hooks may still refuse it.
   */
  create(parent: Task, body: Task["gen"], argc: number, args: unknown, mode: SpawnMode = ORDINARY): Task {
    const task = new Task(this.nextUid(), parent, body, flagsAtSpawn(argc, mode.runsToFirstSuspension), argc === 0 ? undefined : args);
    if (this.asyncContexts.inUse) this.asyncContexts.spawned(task);
    if (this.traces !== null) this.traces.spawned(task);
    return task;
  }

  /** Puts a task made by `create` into the tree and queues its first step. */
  adopt(parent: Task, child: Task): void {
    addChild(parent, child);
    this.liveTasks++;
    const r = this.recorder;
    if (r !== null) {
      const i = r.next;
      r.codes[i] = child.uid * Kind.Kinds + Kind.Spawn;
      r.others[i] = parent.uid;
      if (++r.next === r.capacity) r.wrapped();
    }
    if (this.tracer !== null) trace(this, "spawn", child, parent);
    this.enqueue(child);
  }

  /** Queues the first step of a task without a parent (the root, a system task: see life.ts). */
  adoptTop(task: Task): void {
    kernelOfTop.set(task, this);
    if (this.asyncContexts.inUse) this.asyncContexts.spawned(task);
    this.liveTasks++;
    this.enqueue(task);
  }

  /** A task ended (ending.ts): the count of live tasks goes down. */
  taskEnded(): void {
    if (__BOBBIN_DEV__ && this.liveTasks <= 0) broken(this, "counts a task end with no task alive");
    this.liveTasks--;
  }

  /** Parks the running `task` on `waiter` (the operation then returns `SUSPENDED`). */
  park(task: Task, waiter: Waiter): void {
    toParked(task, waiter);
    if (watchesCancel(task.flags) && waiter.childEnded !== undefined) waitsForChildren(task);
    if (this.traces !== null) this.traces.parked(task);
  }

  /** Wakes a parked task: its operation resumes with `value` (never `undefined`: use `RESUMED`). */
  wake(task: Task, value: unknown): void {
    toWoken(task, value, false);
    this.woken(task);
  }

  /** Wakes a parked task by throwing `error` where it waits. */
  wakeWithError(task: Task, error: unknown): void {
    toWoken(task, error, true);
    this.woken(task);
  }

  /**
   * Wakes a parked task with `error` without cancelling it (`L.interrupt`):
   * its waiter forgets it first. Returns false when it is not parked.
   */
  interrupt(task: Task, error: unknown): boolean {
    const waiter = toInterrupted(task, error);
    if (waiter === null) return false;
    detach(this, task, waiter);
    this.woken(task);
    return true;
  }

  /** Queues a task that `toCancelDelivered` made ready, ahead of ordinary steps (cancellation and cleanup). */
  queueUrgent(task: Task): void {
    this.ready.pushUrgent(task);
    this.loop.schedule();
  }

  /** A parked task was made ready: it joins the ready queue, and a slice runs it soon. */
  private woken(task: Task): void {
    const r = this.recorder;
    if (r !== null) {
      const waker = r.stepping;
      if (waker === 0) r.clock(performance.now()); // woken from a Node callback or a poll: a time of its own
      const i = r.next;
      r.codes[i] = task.uid * Kind.Kinds + Kind.Wake;
      r.others[i] = waker;
      if (++r.next === r.capacity) r.wrapped();
    }
    if (this.tracer !== null) trace(this, "resume", task);
    this.ready.push(task);
    if (!this.loop.isRunning) this.loop.schedule();
  }

  private enqueue(task: Task): void {
    toQueued(task);
    this.ready.push(task);
  }

  // -- the tree --------------------------------------------------------------------

  /** The parent waits for `child` to end (its waiter's `childEnded` hears of it). */
  join(child: Task): void {
    toJoined(child);
  }

  /** The parent stops waiting for `child`. */
  unjoin(child: Task): void {
    toUnjoined(child);
  }

  /** The parent took `child`'s outcome (or gave it up): the child leaves the tree once ended. */
  consume(parent: Task, child: Task): void {
    consumeChild(parent, child);
    if (this.traces !== null && hasFailed(child)) this.failureTaken(parent, child);
  }

  /** `parent` takes the error `child` failed with: a run that keeps traces adds the child to the error's chain of tasks. */
  failureTaken(parent: Task, child: Task): void {
    this.traces?.failedChildTaken(parent, child, outcomeOf(child), this.current === parent);
  }

  /**
   * Cancels a child for its parent. An ended child becomes `Cancelled` at
   * once (returns true); a live one is asked to stop (returns false: the
   * caller waits for it to end).
   */
  cancelChild(parent: Task, child: Task): boolean {
    if (!isPending(child)) {
      if (!wasCancelled(child)) toCancelledAfterEnd(child, cancelledError(child));
      consumeChild(parent, child);
      return true;
    }
    toConsumed(parent, child);
    requestCancel(this, child);
    return false;
  }

  /** Asks a task to stop (a worker cancelling a call it runs). */
  requestCancel(task: Task): void {
    requestCancel(this, task);
  }

  /** `kernel#domain`, as invariants name a kernel. */
  toString(): string {
    return `the kernel of domain ${this.domain}`;
  }
}

/** @internal The kernel of the running task, if any (the registers hold it as a `Host`; every host is a `Kernel`). */
export function runningKernel(): Kernel | null {
  return registers.kernel as Kernel | null;
}

/**
 * @internal The kernel of the running task.
 * @throws TypeError outside a task.
 */
export function kernelOf(operation: string): Kernel {
  currentTask(operation);
  return registers.kernel as Kernel;
}
