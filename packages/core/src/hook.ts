/**
 * Tick hooks (Miou's `Hook`): functions a domain runs before every step.
 */
import { currentTask } from "./scheduler.js";

/** @internal */
export interface TickHooks {
  readonly list: HookKey[];
}

/** A registered tick hook, to give back to `Hook.remove`. */
export interface HookKey {
  /** @internal */ readonly fn: () => void;
  /** @internal */ readonly hooks: TickHooks;
}

/**
 * Tick hooks: `Hook.add(fn)` runs `fn` on the current domain before every
 * scheduler step until `Hook.remove(key)`. A hook that throws is removed (with
 * a process warning).
 *
 * @example
 * ```ts
 * let ticks = 0;
 * const key = B.Hook.add(() => { ticks++; });
 * yield* B.yieldNow();
 * B.Hook.remove(key);
 * ```
 */
export const Hook = {
  /**
   * Adds a tick hook to the current domain.
   * @throws TypeError outside a task, or when `fn` is not a function.
   */
  add(fn: () => void): HookKey {
    if (typeof fn !== "function") throw new TypeError("Hook.add(fn) expects a function");
    const hooks = currentTask("Hook.add()").sched.hooks;
    const key: HookKey = { fn, hooks };
    hooks.list.push(key);
    return key;
  },
  /**
   * Removes a tick hook; removing it twice does nothing.
   * @throws TypeError when `key` was not made by `Hook.add`.
   */
  remove(key: HookKey): void {
    if (key === null || typeof key !== "object" || !("hooks" in key))
      throw new TypeError("Hook.remove(key) expects a key made by Hook.add");
    const i = key.hooks.list.indexOf(key);
    if (i >= 0) key.hooks.list.splice(i, 1);
  },
};
