/**
 * Node's async context (what `AsyncLocalStorage` reads) follows tasks: a
 * task's steps run in the context it was spawned in, or the one it entered
 * since (`enterWith`), whatever woke it — a slice of the loop otherwise runs
 * in the context of whichever callback scheduled it.
 *
 * Node keeps stores in one of two ways, and the kernel finds out which by
 * trying (`asyncMode`):
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
 *   is gone when the scope ends. A write makes a new frame, a copy of the
 *   current one with the store set, and Node copies a frame by iterating it:
 *   the kernel gives each frame its tasks step in (`base`'s, and each task's
 *   own) an iterator of its own that hears the copy (`HeardFrames`). As with
 *   resources, tasks step bare in `base`'s scope until a step writes; that
 *   task's frame is then captured in a resource of its own (before anything
 *   restores the frame), and since nothing can put `base`'s frame back in the
 *   scope the write outlived, the rest of that slice steps each task in a
 *   scope. A task with a context of its own steps in it, and a write there
 *   is captured before its scope ends. So a program that uses no store pays
 *   nothing per step here either.
 *
 *   The frame a resource holds is not part of Node's API: the kernel finds it
 *   as the one property of a resource that `util.types.isMap` accepts, and
 *   checks once that its iterator hears a write. Where either fails
 *   (`Frames`), every task carries a resource, made at its spawn and made
 *   again after each of its steps, which captures the frame the step left.
 */
import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";
import { types } from "node:util";
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
  /** Stores live in frames, and the kernel does not hear writes: every task's context is captured after each step. */
  Frames = 1,
  /** Stores live in frames, and the kernel hears a write: tasks share the run's until one writes. */
  HeardFrames = 2,
}

let detected: AsyncMode | null = null;

/** The key under which a resource holds its frame (found by `asyncMode` where frames are heard). */
let frameKey: symbol | null = null;

/** What a heard frame's copy tells (the kernel whose slice runs; the trial, once). */
interface Listener {
  derived(): void;
}

let hearing: Listener | null = null;

/** A heard frame's iterator: Node is copying the frame to write a store (or someone else iterates it: then a needless capture follows). */
function heardCopy(this: Map<unknown, unknown>): IterableIterator<[unknown, unknown]> {
  hearing?.derived();
  return Map.prototype.entries.call(this);
}

/** Gives the frame `resource` holds the iterator that hears its copies; returns `resource`. */
function heard(resource: AsyncResource): AsyncResource {
  const frame = (resource as unknown as Record<symbol, unknown>)[frameKey!];
  if (types.isMap(frame) && !Object.hasOwn(frame, Symbol.iterator)) Object.defineProperty(frame, Symbol.iterator, { value: heardCopy });
  return resource;
}

/** A store of the kernel's, set in `base`'s frame so that it is a frame (a context with no store has none to hear). */
let marker: AsyncLocalStorage<true> | null = null;

/** A resource whose frame is the current one with `marker` set, heard. */
function heardBase(): AsyncResource {
  marker ??= new AsyncLocalStorage<true>();
  const outer = new AsyncResource(TYPE);
  return outer.runInAsyncScope(() => {
    marker!.enterWith(true);
    return heard(new AsyncResource(TYPE));
  });
}

/** Whether a resource's frame can be found and heard: tries it on `probe` (whose store is 1 in a frame of its own). */
function framesHeard(probe: AsyncLocalStorage<number>): boolean {
  const captured = new AsyncResource(TYPE).runInAsyncScope(() => {
    probe.enterWith(1);
    return new AsyncResource(TYPE);
  }) as unknown as Record<symbol, unknown>;
  const keys = Object.getOwnPropertySymbols(captured).filter((key) => types.isMap(captured[key]));
  if (keys.length !== 1) return false;
  frameKey = keys[0]!;
  let copies = 0;
  const outer = hearing;
  hearing = { derived: () => copies++ };
  try {
    heard(captured as unknown as AsyncResource);
    const store = (captured as unknown as AsyncResource).runInAsyncScope(() => {
      probe.enterWith(2);
      return probe.getStore();
    });
    return copies === 1 && store === 2;
  } finally {
    hearing = outer;
  }
}

/** @internal How this Node keeps stores, found by trying once (the trial's storage is disabled after, so it costs nothing later). */
export function asyncMode(): AsyncMode {
  if (detected === null) {
    const probe = new AsyncLocalStorage<number>();
    const resource = new AsyncResource(TYPE);
    resource.runInAsyncScope(() => probe.enterWith(1));
    if (resource.runInAsyncScope(() => probe.getStore()) === 1) detected = AsyncMode.Resources;
    else detected = framesHeard(probe) ? AsyncMode.HeardFrames : AsyncMode.Frames;
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
export class AsyncContexts implements HostAsyncContexts, Listener {
  /** Whether a step must look for its task's own context: some task has one (always, with unheard frames). */
  inUse: boolean;
  private readonly mode: AsyncMode;
  /** The run's context: slices run in it, and so do tasks without a context of their own. */
  private readonly base: AsyncResource;
  /** With resources: `base` itself, written without the proxy hearing it. */
  private readonly store: AsyncResource | null = null;
  /** The task whose bare step wrote into `base` (or its frame), and with resources what `base` held before. */
  private writer: Task | null = null;
  private writes: Map<PropertyKey, Before> | null = null;
  /** With heard frames: a write outlived its step in the slice's scope, so the slice's later steps each run in a scope. */
  private polluted = false;
  /** The task whose step runs in a scope (read by `stepFn`). */
  private stepping: Task | null = null;
  private readonly stepFn = (): void => this.stepScoped();

  constructor(private readonly k: Host) {
    this.mode = asyncMode();
    this.inUse = this.mode === AsyncMode.Frames;
    if (this.mode === AsyncMode.HeardFrames) {
      this.base = heardBase();
      return;
    }
    const store = new AsyncResource(TYPE);
    this.store = store;
    this.base = new Proxy(store, { set: (target, key, value) => this.written(target, key, value) });
  }

  /** Runs a slice of the loop in the run's context. */
  runSlice(slice: () => void): void {
    if (this.mode !== AsyncMode.HeardFrames) {
      this.base.runInAsyncScope(this.settledAfter, this, slice);
      return;
    }
    const outer = hearing;
    hearing = this;
    try {
      this.base.runInAsyncScope(this.settledAfter, this, slice);
    } finally {
      hearing = outer;
      this.polluted = false;
    }
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
    const scope = ownOf(task) ?? (this.polluted ? this.base : null);
    if (scope === null) {
      step(this.k, task);
      return;
    }
    this.stepping = task;
    scope.runInAsyncScope(this.stepFn);
  }

  private stepScoped(): void {
    const task = this.stepping!;
    this.stepping = null;
    step(this.k, task);
    // A frame entered during the step is gone once its scope ends: capture it now.
    if (this.mode === AsyncMode.Frames) {
      if (isPending(task)) familyOf(task).asyncContext = new AsyncResource(TYPE);
    } else if (this.writer === task) {
      this.writer = null;
      if (isPending(task)) familyOf(task).asyncContext = heard(new AsyncResource(TYPE));
    }
  }

  /** A task was made (by the running task, if any): it takes the context it is made in, if that is not the run's. */
  spawned(child: Task): void {
    if (this.mode === AsyncMode.Frames) {
      familyOf(child).asyncContext = new AsyncResource(TYPE);
      return;
    }
    const spawner = this.k.current;
    if (spawner === null) return;
    if (spawner === this.writer) {
      familyOf(child).asyncContext = this.mode === AsyncMode.HeardFrames ? heard(new AsyncResource(TYPE)) : new AsyncResource(TYPE);
      return;
    }
    const own = ownOf(spawner);
    if (own === null) return;
    // A frame is never written in place, so the child can share its spawner's; a resource is.
    familyOf(child).asyncContext = this.mode === AsyncMode.HeardFrames ? own : new AsyncResource(TYPE);
  }

  /** With heard frames: a store was written in a frame the kernel hears (see `heardCopy`). */
  derived(): void {
    this.useContexts();
    const task = this.k.current;
    // A write outside a step (a hook, a tracer) is the run's, but it too outlives its place in the slice.
    if (task === null) this.polluted = true;
    else this.writer = task;
  }

  /** Steps look for their task's context from now on (the kernel hears of it: see `Kernel.stepsChanged`). */
  private useContexts(): void {
    if (this.inUse) return;
    this.inUse = true;
    this.k.stepsChanged();
  }

  /** With resources: an `AsyncLocalStorage` writes into `base` (`enterWith`, or `run` setting and restoring). */
  private written(target: AsyncResource, key: PropertyKey, value: unknown): boolean {
    const task = this.k.current;
    // Outside a step (a hook, a tracer), the write is the run's.
    if (task !== null) {
      if (this.writer !== null && this.writer !== task) this.settle();
      this.writer = task;
      this.useContexts();
      const writes = (this.writes ??= new Map());
      if (!writes.has(key)) writes.set(key, { had: Object.hasOwn(target, key), value: Reflect.get(target, key) });
    }
    return Reflect.set(target, key, value);
  }

  /**
   * The writer's bare step is over. With resources, it takes a copy of `base`
   * as it stands (with its writes), and `base` gets back what it held before
   * them; with heard frames, it takes the frame its step left, which stays
   * the slice's until the slice ends.
   */
  private settle(): void {
    const task = this.writer!;
    this.writer = null;
    if (this.mode === AsyncMode.HeardFrames) {
      if (isPending(task)) familyOf(task).asyncContext = heard(new AsyncResource(TYPE));
      this.polluted = true;
      return;
    }
    const writes = this.writes!;
    this.writes = null;
    if (isPending(task) && ownOf(task) === null) familyOf(task).asyncContext = new AsyncResource(TYPE);
    const store = this.store! as unknown as Record<PropertyKey, unknown>;
    for (const [key, before] of writes) {
      if (before.had) store[key] = before.value;
      else delete store[key];
    }
  }
}
