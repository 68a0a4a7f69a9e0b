/**
 * The poll backend in a worker domain. Worker domains import this module
 * (and `backend.ts`, where `defineBackend` tells them how to make their own
 * poll backend), so it only defines things.
 */
import * as B from "@bobbin/core";
import { sleep } from "@bobbin/unix";
import type { PollBackend } from "./backend.js";

/**
 * Sleeps `seconds` on its own domain's poll backend; returns which domain
 * and backend that was. When `asleep` (an `Int32Array` over a
 * SharedArrayBuffer) is given, `asleep[0]` is set to 1 just before the task
 * sleeps, and `asleep[1]` to how many times its domain's `select` was
 * interrupted when it ends (cancelled or not).
 *
 * @example
 * ```ts
 * yield* B.awaitExn(B.call(sleepThere, 0.01));   // { domain: 1, backend: "poll" }
 * ```
 * @throws Cancelled when cancelled while it sleeps.
 */
export const sleepThere = B.defineTask(import.meta.url, "sleepThere", function* (seconds: number, asleep?: Int32Array) {
  const backend = B.Domain.events() as PollBackend;
  try {
    if (asleep !== undefined) Atomics.store(asleep, 0, 1);
    yield* sleep(seconds);
    return { domain: B.Domain.self(), backend: backend.name };
  } finally {
    if (asleep !== undefined) Atomics.store(asleep, 1, backend.poller.stats.interrupts);
  }
});
