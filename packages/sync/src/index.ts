/**
 * @bobbin/sync — synchronisation for Bobbin's fibers: a fair task-owned
 * `Mutex`, `Condition`, `Semaphore`, µthreads' `MVar`, `Lazy`, and Miou's
 * `Computation` and `Ownership`; `Channel` and `Broadcast`, whose operations
 * are cases of core's `B.select`. Every waiter is cancellation-aware: a
 * cancelled waiter leaves its queue, passes on what it was given, and leaves
 * nothing locked.
 *
 * `Mutex.shared()`, `Condition.shared()` and `Semaphore.shared(n)` work across
 * domains: passed to `B.call`/`B.parallel`, they arrive in parallel tasks over
 * the same SharedArrayBuffer, and a waiting task never blocks its domain.
 *
 * Built only on `@bobbin/core`'s public seam (`Trigger`, `TaskLocal`,
 * `onSpawn`/`onExit`, `definePortable`, `SelectCase`/`Choice`).
 *
 * @example
 * ```ts
 * import * as B from "@bobbin/core";
 * import { Mutex, Condition } from "@bobbin/sync";
 *
 * const m = new Mutex(), c = new Condition();
 * let ready = false;
 * await B.run(function* () {
 *   const waiter = B.spawn(function* () {
 *     yield* m.protect(function* () { while (!ready) yield* c.wait(m); });
 *     return "ready";
 *   });
 *   yield* m.protect(() => { ready = true; c.signal(); });
 *   return yield* B.awaitExn(waiter);
 * });
 * ```
 * @packageDocumentation
 */

export { Cancelled, NotOwner, ResourceLeaked } from "@bobbin/core";
export { Broadcast, type BroadcastReceived, Subscription } from "./broadcast.js";
export type { Body } from "./call.js";
export { Channel } from "./channel.js";
export { Computation, type Failure } from "./computation.js";
export { Condition } from "./condition.js";
export { EMPTY, END } from "./end.js";
export { AlreadyOwned, ChannelClosed, LazyUndefined, MutexAlreadyHeld, MutexNotHolder, MutexNotLocked, NoParent } from "./errors.js";
export { Lazy } from "./lazy.js";
export { Mutex, MutexGuard } from "./mutex.js";
export { MVar, type Taken } from "./mvar.js";
export { Ownership, Resource } from "./ownership.js";
export { Semaphore } from "./semaphore.js";
