/** Whether the native addon works here. */
import { loadAddon } from "./load.js";

/**
 * Whether the addon is built and loads here (never throws).
 *
 * @example
 * ```ts
 * if (!nativeAvailable()) console.log("using the libuv backend");
 * ```
 * @throws never.
 */
export function nativeAvailable(): boolean {
  try {
    loadAddon();
    return true;
  } catch {
    return false;
  }
}
