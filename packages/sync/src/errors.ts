/**
 * The error classes of `@bobbin/sync`. Each extends core's `BobbinError`, so it
 * has a stable `name` (the class name) that survives realms and worker threads,
 * and each is registered with core's `defineError`, so that it keeps its class
 * when a parallel task fails with one (a domain that has not loaded this
 * package imports it by its URL to rebuild the error).
 */
import { BobbinError, defineError } from "@bobbin/core";

/**
 * `unlock` of a mutex that is not locked (unlocked twice, or never locked).
 *
 * @example
 * ```ts
 * const m = new Mutex();
 * m.unlock();   // throws MutexNotLocked
 * ```
 */
export class MutexNotLocked extends BobbinError {
  constructor(readonly task: number) {
    super(`task ${task} unlocked a mutex that is not locked: unlock only after a lock, once (Mutex.protect or \`using\` do it for you)`);
  }
}

/**
 * `unlock` (or `Condition.wait`) by a task that does not hold the mutex.
 * A Bobbin mutex is owned by the task that locked it; only that task may
 * unlock it. For a shared mutex (`Mutex.shared()`), `holderDomain` says which
 * domain the holder runs on (task uids are per domain).
 *
 * @example
 * ```ts
 * yield* m.lock();
 * B.spawn(function* () { m.unlock(); });   // the child throws MutexNotHolder
 * ```
 */
export class MutexNotHolder extends BobbinError {
  constructor(
    readonly task: number,
    /** The holder's uid; null when nobody holds it, or (shared mutex) while it changes hands. */
    readonly holder: number | null,
    operation = "unlock",
    /** Shared mutex only: the holder's domain (null while the lock changes hands); undefined for a local mutex. */
    readonly holderDomain?: number | null,
  ) {
    super(
      `task ${task} cannot ${operation} a mutex ${holderText(holder, holderDomain)}` +
        (holder === null && holderDomain === undefined
          ? ": lock it first"
          : `: only the task that locked a mutex may ${operation === "unlock" ? "unlock it" : `${operation} with it`}`),
    );
  }
}

function holderText(holder: number | null, domain: number | null | undefined): string {
  if (domain === undefined) return holder === null ? "it does not hold (nobody holds it)" : `held by task ${holder}`;
  if (domain === null) return "held by another task (the lock is being handed over)";
  return holder === null ? `held by a task of domain ${domain}` : `held by task ${holder} of domain ${domain}`;
}

/**
 * `lock` by the task that already holds the mutex. Bobbin mutexes are not
 * recursive: locking twice would wait forever, so it is an error instead.
 *
 * @example
 * ```ts
 * yield* m.lock();
 * yield* m.lock();   // throws MutexAlreadyHeld
 * ```
 */
export class MutexAlreadyHeld extends BobbinError {
  constructor(readonly task: number) {
    super(
      `task ${task} already holds this mutex and locked it again: mutexes are not recursive; unlock it first, or lock it once higher up`,
    );
  }
}

/**
 * A lazy value was forced by its own computation (Miou's `Lazy.Undefined`):
 * waiting for itself would never end.
 *
 * @example
 * ```ts
 * const l: Lazy<number> = Lazy.fromFun(function* () { return yield* l.force(); });
 * yield* l.force();   // throws LazyUndefined
 * ```
 */
export class LazyUndefined extends BobbinError {
  constructor(readonly task: number) {
    super(`task ${task} forced a lazy value whose computation it is running: a lazy value cannot depend on itself`);
  }
}

/**
 * `Ownership.own` of a resource that a task already owns (this one or another):
 * ownership is exclusive. Pass it with `spawn({ give })` or `Ownership.transfer`,
 * or `disown` it first.
 *
 * @example
 * ```ts
 * Ownership.own(r);
 * Ownership.own(r);   // throws AlreadyOwned
 * ```
 */
export class AlreadyOwned extends BobbinError {
  constructor(
    readonly task: number,
    readonly owner: number,
    readonly resource: number,
  ) {
    super(
      owner === task
        ? `task ${task} already owns resource ${resource}: own it once`
        : `task ${task} cannot own resource ${resource}: task ${owner} owns it; ownership moves only with ` +
            "spawn({ give: [r] }, …), Ownership.transfer, or disown then own",
    );
  }
}

/**
 * `Ownership.transfer` from the root task of a run: it has no parent to hand
 * the resource to.
 *
 * @example
 * ```ts
 * await B.run(function* () { const r = Ownership.create(1, close); Ownership.own(r); Ownership.transfer(r); });   // NoParent
 * ```
 */
export class NoParent extends BobbinError {
  constructor(
    readonly task: number,
    readonly resource: number,
  ) {
    super(`task ${task} is the root of its run and has no parent to transfer resource ${resource} to: release or disown it instead`);
  }
}

/**
 * A send on a closed channel (or a publish on a closed broadcast), or a send
 * that was waiting when its channel closed: the value was not delivered.
 *
 * @example
 * ```ts
 * ch.close();
 * yield* ch.send(1);   // throws ChannelClosed
 * ```
 */
export class ChannelClosed extends BobbinError {
  constructor(what = "channel") {
    super(
      `cannot send on a closed ${what}: the value was not delivered. Close a ${what} once every sender is done ` +
        "(its receivers then read what is left, then { done: true })",
    );
  }
}

for (const errorClass of [MutexNotLocked, MutexNotHolder, MutexAlreadyHeld, LazyUndefined, AlreadyOwned, NoParent, ChannelClosed]) {
  defineError(import.meta.url, errorClass);
}
