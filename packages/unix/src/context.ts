/**
 * Where a task finds its I/O backend: the backend of its domain, which core
 * keeps as the domain's events (`L.currentEvents()`), in dom0 and in every
 * worker domain alike. (Dom0's run also has a context of its own, its signal
 * handlers: see signals.ts.)
 */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import type { Backend } from "./contract.js";

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
  const events = L.currentEvents();
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
