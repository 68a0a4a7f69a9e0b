/**
 * The error classes of `@bobbin/sync`. Each extends core's `BobbinError`, so it
 * has a stable `name` (the class name) that survives realms and worker threads.
 */
import { BobbinError } from "@bobbin/core";

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
 * unlock it.
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
    readonly holder: number | null,
    operation = "unlock",
  ) {
    super(
      holder === null
        ? `task ${task} cannot ${operation} a mutex it does not hold (nobody holds it): lock it first`
        : `task ${task} cannot ${operation} a mutex held by task ${holder}: only the task that locked a mutex may ` +
            (operation === "unlock" ? "unlock it" : `${operation} with it`),
    );
  }
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
    super(`task ${task} already holds this mutex and locked it again: mutexes are not recursive; unlock it first, or lock it once higher up`);
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
