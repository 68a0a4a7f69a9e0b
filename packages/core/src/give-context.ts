/**
 * `giveContext`: a context value given to a task from outside its body, for
 * instrumentation. Apart from context.ts so that a program's declarations
 * (which name `Context`) never reach it.
 */
import { Context, checkCloneable } from "./context.js";
import { describe } from "./describe.js";
import { contextOf, setContext } from "./kernel/context.js";
import { Task } from "./kernel/task.js";

/**
 * Gives `task` a value of `context` for the rest of its life, from outside
 * its body: the task, and the tasks it spawns afterwards (on any domain, if
 * the context crosses), see it as the nearest. For instrumentation that
 * hears tasks begin (a spawn hook, the `task.spawn` or `task.start`
 * diagnostics channel) and has no body to wrap in `with`; a program uses
 * `with`. A `with` the task is running when it gets the value puts back, as
 * its body ends, what the task saw before it.
 *
 * @example
 * ```ts
 * const tenant = B.createContext("tenant", "");
 * L.onSpawn((child) => { if (child.name === "handler") L.giveContext(child, tenant, "acme"); });
 * ```
 * @throws TypeError when `task` is not a task or `context` not a {@link Context}.
 * @throws Uncloneable when the context crosses domains and `value` cannot be cloned.
 */
export function giveContext<T>(task: Task<unknown>, context: Context<T>, value: T): void {
  if (!(task instanceof Task)) throw new TypeError(`giveContext(task, context, value) expects a task, got ${describe(task)}`);
  if (!(context instanceof Context)) {
    throw new TypeError(`giveContext(task, context, value) expects a context made by B.createContext, got ${describe(context)}`);
  }
  const crosses = context.crossesDomains;
  if (crosses) checkCloneable(context.name, value);
  setContext(task, { name: context.name, value, crosses, outer: contextOf(task) });
}
