/**
 * Node's async context (what `AsyncLocalStorage` reads) follows tasks: a
 * task's steps run in the context it was spawned in, or the one it entered
 * since (`enterWith`), whatever woke it — a slice of the loop otherwise runs
 * in the context of whichever callback scheduled it.
 *
 * Node keeps stores in one of two ways, and the kernel finds out which by
 * trying (`storesInResources`):
 *
 * - In the resource whose callback runs (Node 20 and 22): `enterWith` writes
 *   the store into `executionAsyncResource()`. The kernel runs each slice in
 *   a resource of its own, `base`, made where `run` was called; every task
 *   runs in it until an `AsyncLocalStorage` writes into it during the task's
 *   step (a proxy hears the write). Then that task gets a resource of its own
 *   (`Family.asyncContext`), a copy of `base` with the write, `base` gets its
 *   old stores back, and from then on the task, and every task spawned in its
 *   context, steps in its own resource, where its later writes stay. A program
 *   that never writes a store from a task pays one field read per step.
 * - In a frame that a resource captures when it is made (Node 24, or 22 with
 *   `--experimental-async-context-frame`): a write inside a resource's scope
 *   is gone when the scope ends, and nothing tells that one happened. Every
 *   task then carries a resource, made at its spawn and made again after each
 *   of its steps, which captures the frame the step left.
 */
import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";
import { step } from "./fiber.js";
import type { Host, HostAsyncContexts } from "./host.js";
import { isPending } from "./state.js";
import type { Task } from "./task.js";
import { coldOf, familyOf } from "./tree.js";

/** The resource type async hooks see for the contexts of tasks. */
const TYPE = "BOBBIN_TASK";

/** @internal How the kernel keeps tasks' async contexts (see the file comment). */
export const enum AsyncMode {
  /** Stores live in resources: tasks share the run's until one writes. */
  Resources = 0,
  /** Stores live in frames: every task's context is captured after each step. */
  Frames = 1,
}

let detected: AsyncMode | null = null;

/** @internal How this Node keeps stores, found by trying once (the trial's storage is disabled after, so it costs nothing later). */
export function asyncMode(): AsyncMode {
  if (detected === null) {
    const probe = new AsyncLocalStorage<number>();
    const resource = new AsyncResource(TYPE);
    resource.runInAsyncScope(() => probe.enterWith(1));
    detected = resource.runInAsyncScope(() => probe.getStore()) === 1 ? AsyncMode.Resources : AsyncMode.Frames;
    probe.disable();
  }
  return detected;
}

/** @internal For tests: makes the kernels started afterwards keep contexts the other way (null: as detected). */
export function forceAsyncMode(mode: AsyncMode | null): void {
  detected = mode;
}

/** The task's own context, if it has one. */
function ownOf(task: Task): AsyncResource | null {
  return coldOf(task)?.asyncContext ?? null;
}

/** What `base` held under a key before a task's step wrote it. */
interface Before {
  readonly had: boolean;
  readonly value: unknown;
}

/** @internal The async contexts of one kernel's tasks (see the file comment). */
export class AsyncContexts implements HostAsyncContexts {
  /** Whether a step must look for its task's own context: some task has one (always, with frames). */
  inUse: boolean;
  private readonly mode: AsyncMode;
  /** The run's context: slices run in it, and so do tasks without a context of their own. */
  private readonly base: AsyncResource;
  /** `base` itself, written without the proxy hearing it. */
  private readonly store: AsyncResource;
  /** The task whose step wrote into `base`, and what `base` held before. */
  private writer: Task | null = null;
  private writes: Map<PropertyKey, Before> | null = null;
  /** The task whose step runs in its own context (read by `stepFn`). */
  private stepping: Task | null = null;
  private readonly stepFn = (): void => this.stepOwn();

  constructor(private readonly k: Host) {
    this.mode = asyncMode();
    this.inUse = this.mode === AsyncMode.Frames;
    const store = new AsyncResource(TYPE);
    this.store = store;
    this.base = new Proxy(store, { set: (target, key, value) => this.written(target, key, value) });
  }

  /** Runs a slice of the loop in the run's context. */
  runSlice(slice: () => void): void {
    this.base.runInAsyncScope(this.settledAfter, this, slice);
  }

  private settledAfter(slice: () => void): void {
    try {
      slice();
    } finally {
      if (this.writer !== null) this.settle();
    }
  }

  /** Runs a step of `task` in its own context, or the run's (the loop calls it while `inUse`). */
  step(task: Task): void {
    if (this.writer !== null) this.settle();
    const own = ownOf(task);
    if (own === null) {
      step(this.k, task);
      return;
    }
    this.stepping = task;
    own.runInAsyncScope(this.stepFn);
  }

  private stepOwn(): void {
    const task = this.stepping!;
    this.stepping = null;
    step(this.k, task);
    // A frame entered during the step is gone once its scope ends: capture it now.
    if (this.mode === AsyncMode.Frames && isPending(task)) familyOf(task).asyncContext = new AsyncResource(TYPE);
  }

  /** A task was made (by the running task, if any): it takes the context it is made in, if that is not the run's. */
  spawned(child: Task): void {
    if (this.mode === AsyncMode.Frames) {
      familyOf(child).asyncContext = new AsyncResource(TYPE);
      return;
    }
    const spawner = this.k.current;
    if (spawner !== null && (spawner === this.writer || ownOf(spawner) !== null)) familyOf(child).asyncContext = new AsyncResource(TYPE);
  }

  /** An `AsyncLocalStorage` writes into `base` (`enterWith`, or `run` setting and restoring). */
  private written(target: AsyncResource, key: PropertyKey, value: unknown): boolean {
    const task = this.k.current;
    // Outside a step (a hook, a tracer), the write is the run's.
    if (task !== null) {
      if (this.writer !== null && this.writer !== task) this.settle();
      this.writer = task;
      this.inUse = true;
      const writes = (this.writes ??= new Map());
      if (!writes.has(key)) writes.set(key, { had: Object.hasOwn(target, key), value: Reflect.get(target, key) });
    }
    return Reflect.set(target, key, value);
  }

  /**
   * The writer's step is over: it takes a copy of `base` as it stands (with
   * its writes), and `base` gets back what it held before them.
   */
  private settle(): void {
    const task = this.writer!;
    const writes = this.writes!;
    this.writer = null;
    this.writes = null;
    if (isPending(task) && ownOf(task) === null) familyOf(task).asyncContext = new AsyncResource(TYPE);
    const store = this.store as unknown as Record<PropertyKey, unknown>;
    for (const [key, before] of writes) {
      if (before.had) store[key] = before.value;
      else delete store[key];
    }
  }
}
