/**
 * Where a task finds its I/O backend: the backend of its domain, which core
 * keeps as the domain's events (`B.Domain.events()`), in dom0 and in every
 * worker domain alike. Dom0's run also has a context of its own (signal
 * handlers), found through dom0's backend.
 */
import * as B from "@bobbin/core";
import type { Backend } from "./contract.js";
import type { SignalTable } from "./signals.js";

/** @internal What a `run` of `@bobbin/unix` shares with its tasks on dom0. */
export interface RunContext {
  /** Dom0's backend, by which the run's tasks find this context. */
  readonly backend: Backend;
  /** Signal handlers of the run. */
  readonly signals: SignalTable;
}

/** The context of each run in progress on this thread, by its dom0 backend. */
const contexts = new Map<Backend, RunContext>();

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

/** @internal The run has started: its tasks find `context` through its backend. */
export function registerContext(context: RunContext): void {
  contexts.set(context.backend, context);
}

/** @internal The run is over. */
export function unregisterContext(context: RunContext): void {
  contexts.delete(context.backend);
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
 * @internal The dom0 run context of the current task (signal handlers),
 * found through its domain's backend.
 * @throws TypeError outside a task, in a run not started by `@bobbin/unix`'s
 * `run`, or in a worker domain (signal handlers run on dom0).
 */
export function currentContext(what: string): RunContext {
  currentTaskFor(what);
  const events = B.Domain.events();
  const context = events === null ? undefined : contexts.get(events as Backend);
  if (context !== undefined) return context;
  if (B.Domain.self() !== 0) {
    throw new TypeError(
      `${what} is for tasks of dom0 (signal handlers run as tasks on dom0); call it before starting parallel work, or from a task of dom0`,
    );
  }
  throw new TypeError(`${what} needs a run of @bobbin/unix: start the program with run(main) from @bobbin/unix, not @bobbin/core's run`);
}
