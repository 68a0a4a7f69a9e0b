/**
 * Which run a task belongs to: `run` registers its root task with the run's
 * backend; operations that make something new (a socket, a sleeper, a
 * timeout, a signal handler) find it by walking up to the root.
 */
import * as B from "@bobbin/core";
import type { Backend } from "./backend.js";
import type { SignalTable } from "./signals.js";

/** @internal What a `run` of `@bobbin/unix` shares with its tasks. */
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
 * @internal The run context of the current task.
 * @throws TypeError outside a task, or in a run not started by `@bobbin/unix`'s `run`.
 */
export function currentContext(what: string): RunContext {
  let task = currentTaskFor(what);
  while (task.parent !== null) task = task.parent;
  if (task === lastRoot) return lastContext!;
  const context = roots.get(task);
  if (context === undefined) {
    throw new TypeError(
      `${what} needs an I/O backend: start the program with run(main) from @bobbin/unix, not @bobbin/core's run ` +
        "(tasks of parallel domains have no I/O backend yet)",
    );
  }
  lastRoot = task;
  lastContext = context;
  return context;
}
