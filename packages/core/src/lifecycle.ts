/**
 * Spawn and exit hooks: the seam through which packages above core (such as
 * `@bobbin/sync`'s Ownership) follow tasks without core knowing about them.
 * (Exit hooks run in the kernel, which is handed them: see kernel/hooks.ts.)
 */

export type { Ending, ExitHook } from "./kernel/hooks.js";

import type { ExitHook } from "./kernel/hooks.js";
import type { Task } from "./kernel/task.js";
import type { SpawnOptions } from "./spawn-options.js";

/**
 * The mark of the values `spawn({ give })` moves to the child: a package
 * whose values belong to one task at a time (`@bobbin/sync`'s `Resource`)
 * gives them this property, set to `true`, and moves them in a spawn hook.
 * Core refuses any other value in `give`, so that a value nothing would move
 * is an error rather than silently left behind.
 *
 * @example
 * ```ts
 * class Lease { readonly [L.givable] = true; }
 * L.onSpawn((child, parent, options) => { for (const r of options?.give ?? []) if (r instanceof Lease) moveLease(r, child); });
 * B.spawn({ give: [lease] }, worker);
 * ```
 * @throws never: it is a symbol (`Symbol.for("@bobbin/core.givable")`, the
 * same in every copy of the package).
 */
export const givable: unique symbol = Symbol.for("@bobbin/core.givable");

/**
 * Runs when a task is spawned, before it is queued, in the spawner's context.
 * `spawner` is the task that called `spawn`: the parent itself, except for a
 * task spawned into a group (`g.spawn`) by another task of the group, whose
 * parent is the task that opened the group. Throwing cancels the spawn: the
 * error is thrown by `spawn` in the spawner.
 *
 * @example
 * ```ts
 * const hook: L.SpawnHook = (child, parent) => console.log(`${parent} spawned ${child}`);
 * L.onSpawn(hook);
 * ```
 */
export type SpawnHook = (child: Task, parent: Task, options: SpawnOptions | undefined, spawner: Task) => void;

/** @internal */ export const spawnHooks: SpawnHook[] = [];
/** @internal This thread's exit hooks, handed to every kernel (which reads them as they are at each end). */
export const exitHooks: ExitHook[] = [];

/**
 * Registers a hook run for every task spawned on this thread. Returns a
 * function that removes it.
 *
 * @example
 * ```ts
 * const off = L.onSpawn((child, parent, options) => console.log(parent.uid, "→", child.uid));
 * off();
 * ```
 * @throws TypeError when `hook` is not a function.
 */
export function onSpawn(hook: SpawnHook): () => void {
  return register(spawnHooks, hook, "onSpawn");
}

/**
 * Registers a hook run for every task of this thread when it has ended
 * (see {@link ExitHook} for what an error it returns does). Returns a
 * function that removes it.
 *
 * @example
 * ```ts
 * L.onExit((task, ending) => (ending === "resolved" && leaks(task) ? new B.ResourceLeaked(task.uid, 1) : undefined));
 * ```
 * @throws TypeError when `hook` is not a function.
 */
export function onExit(hook: ExitHook): () => void {
  return register(exitHooks, hook, "onExit");
}

function register<H>(list: H[], hook: H, name: string): () => void {
  if (typeof hook !== "function") throw new TypeError(`${name}(hook) expects a function`);
  list.push(hook);
  return () => {
    const i = list.indexOf(hook);
    if (i >= 0) list.splice(i, 1);
  };
}
