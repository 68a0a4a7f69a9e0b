/**
 * Chapter 7's parallel task. Worker domains import this module (and
 * `chat.ts`, for their events backend), so it only defines things.
 */
import * as B from "@bobbin/core";
import * as Chat from "./chat.js";

/**
 * `fun () -> Chat.sleep delay`, on another domain. When `asleep` (an
 * `Int32Array` over a SharedArrayBuffer) is given, `asleep[0]` is set to 1
 * just before the task suspends, and `asleep[1]` to the number of times its
 * domain's `select` was interrupted when it ends (cancelled or not).
 */
export const sleeper = B.defineTask(import.meta.url, "sleeper", function* (delay: number, asleep?: Int32Array) {
  try {
    if (asleep !== undefined) Atomics.store(asleep, 0, 1);
    yield* Chat.sleep(delay);
  } finally {
    if (asleep !== undefined) Atomics.store(asleep, 1, Chat.sleepers().interrupts);
  }
});
