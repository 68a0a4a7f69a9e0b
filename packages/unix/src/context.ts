/**
 * Where a task finds its I/O backend: the backend of its domain, which core
 * keeps as the domain's events (`B.Domain.events()`), in dom0 and in every
 * worker domain alike. Dom0's run also has a context of its own (signal
 * handlers), found by walking up to the run's root task.
 */
import * as B from "@bobbin/core";
import type { Backend } from "./backend.js";
import type { SignalTable } from "./signals.js";

/** @internal What a `run` of `@bobbin/unix` shares with its tasks on dom0. */
export interface RunContext {
  readonly backend: Backend;
  /** Signal handlers of the run. */
  readonly signals: SignalTable;
  /** The run's root task, once it started. */
  root: B.Task<unknown> | null;
}

const roots = new Map<B.Task<unknown>, RunContext>();
let lastRoot: B.Task<unknown> | null = null;
let lastContext: RunContext | null = null;

/** Backends made by `run` or by a factory of `defineBackend` in this thread (one per domain). */
const backends = new WeakSet<object>();

/** @internal Marks `backend` as a domain's backend of `@bobbin/unix`. */
export function registerBackend(backend: Backend): void {
  backends.add(backend);
}

/** @internal Whether `value` is a domain's backend of `@bobbin/unix` in this thread. */
export function isRegisteredBackend(value: unknown): value is Backend {
  return typeof value === "object" && value !== null && backends.has(value);
}

/** @internal */
export function registerRoot(root: B.Task<unknown>, context: RunContext): void {
  roots.set(root, context);
}

/** @internal */
export function unregisterRoot(root: B.Task<unknown>): void {
  roots.delete(root);
  if (lastRoot === root) {
    lastRoot = null;
    lastContext = null;
  }
}

/** @internal The current task, with a message naming `what` outside a task. */
export function currentTaskFor(what: string): B.Task<unknown> {
  try {
    return B.self();
  } catch {
    throw new TypeError(`${what} must be called from inside a task: start one with run(function* () { … }) from @bobbin/unix`);
  }
}

/**
 * @internal The I/O backend of the current task's domain.
 * @throws TypeError outside a task, in a run not started by `@bobbin/unix`'s
 * `run`, or in a worker domain of a run whose backend factory was not
 * defined with `defineBackend` (so the worker could not make its own).
 */
export function currentBackend(what: string): Backend {
  currentTaskFor(what);
  const events = B.Domain.events();
  if (isRegisteredBackend(events)) return events;
  const domain = B.Domain.self();
  if (domain !== 0) {
    throw new TypeError(
      `${what} needs an I/O backend, and domain ${domain} has none: a worker domain makes its own backend only when ` +
        "run(main, { backend }) was given a factory defined with defineBackend(import.meta.url, name, factory) " +
        "(the default libuv backend is); an inline factory such as () => libuv({ … }) serves dom0 only",
    );
  }
  throw new TypeError(`${what} needs an I/O backend: start the program with run(main) from @bobbin/unix, not @bobbin/core's run`);
}

/**
 * @internal The dom0 run context of the current task (signal handlers).
 * @throws TypeError outside a task, in a run not started by `@bobbin/unix`'s
 * `run`, or in a worker domain (signal handlers run on dom0).
 */
export function currentContext(what: string): RunContext {
  let task = currentTaskFor(what);
  while (task.parent !== null) task = task.parent;
  if (task === lastRoot) return lastContext!;
  const context = roots.get(task);
  if (context === undefined) {
    if (B.Domain.self() !== 0) {
      throw new TypeError(
        `${what} is for tasks of dom0 (signal handlers run as tasks on dom0); call it before starting parallel work, or from a task of dom0`,
      );
    }
    throw new TypeError(`${what} needs a run of @bobbin/unix: start the program with run(main) from @bobbin/unix, not @bobbin/core's run`);
  }
  lastRoot = task;
  lastContext = context;
  return context;
}
