/**
 * Tick hooks (Miou's `Hook`): functions a domain runs before every step.
 */

import { type Kernel, kernelOf } from "./kernel/kernel.js";

/**
 * A registered tick hook, to give back to `Hook.remove`.
 *
 * @example
 * ```ts
 * const key = L.Hook.add(() => steps++);
 * // …
 * L.Hook.remove(key);
 * ```
 */
export interface HookKey {
  /** @internal */ readonly fn: () => void;
  /** @internal */ readonly kernel: Kernel;
}

/**
 * Tick hooks: `Hook.add(fn)` runs `fn` on the current domain before every
 * scheduler step until `Hook.remove(key)`. A hook that throws is removed and
 * the run fails with `CallbackFailed`.
 *
 * @example
 * ```ts
 * let ticks = 0;
 * const key = L.Hook.add(() => { ticks++; });
 * yield* B.yieldNow();
 * L.Hook.remove(key);
 * ```
 */
export const Hook = {
  /**
   * Adds a tick hook to the current domain.
   * @throws TypeError outside a task, or when `fn` is not a function.
   */
  add(fn: () => void): HookKey {
    if (typeof fn !== "function") throw new TypeError("Hook.add(fn) expects a function");
    const kernel = kernelOf("Hook.add()");
    const key: HookKey = { fn, kernel };
    kernel.tickHooks.push(key);
    kernel.stepsChanged();
    return key;
  },
  /**
   * Removes a tick hook; removing it twice does nothing.
   * @throws TypeError when `key` was not made by `Hook.add`.
   */
  remove(key: HookKey): void {
    if (key === null || typeof key !== "object" || !("kernel" in key))
      throw new TypeError("Hook.remove(key) expects a key made by Hook.add");
    const hooks = key.kernel.tickHooks;
    const i = hooks.indexOf(key);
    if (i < 0) return;
    hooks.splice(i, 1);
    key.kernel.stepsChanged();
  },
};
