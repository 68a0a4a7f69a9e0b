/**
 * The error classes of the runtime. Each has a stable `name`, so code can test
 * `error.name === "Cancelled"` across realms and worker threads as well as with
 * `instanceof`.
 */

/**
 * Base class of every error raised by Bobbin itself.
 *
 * @example
 * ```ts
 * try { yield* work(); } catch (e) { if (e instanceof B.BobbinError) console.error(e.name, e.message); }
 * ```
 */
export class BobbinError extends Error {
  override get name(): string {
    return this.constructor.name;
  }
}

/**
 * The outcome of a task that was cancelled, and the exception delivered into a
 * task when its cancellation reaches it.
 *
 * @example
 * ```ts
 * const r = yield* B.awaitTask(t);
 * if (!r.ok && r.error instanceof B.Cancelled) console.log("t was cancelled");
 * ```
 */
export class Cancelled extends BobbinError {
  constructor(message = "the task was cancelled") {
    super(message);
  }
}

/**
 * A task returned normally while one of its children was neither awaited nor
 * cancelled (Miou's first rule). Fails the whole `run`; the task cannot catch it.
 *
 * @example
 * ```ts
 * await B.run(function* () { B.spawn(child); });   // rejects with StillHasChildren
 * ```
 */
export class StillHasChildren extends BobbinError {
  constructor(
    readonly task: number,
    readonly children: readonly number[],
  ) {
    super(
      `task ${task} returned while its children [${children.join(", ")}] were still ` +
        "alive or unconsumed: await or cancel every child before returning " +
        "(for background tasks, use orphans() and care())",
    );
  }
}

/**
 * `await`/`cancel` of a task by a task that is not its direct parent (Miou's
 * second rule). Thrown in the caller.
 *
 * @example
 * ```ts
 * const a = B.spawn(work);
 * const b = B.spawn(function* () { yield* B.awaitExn(a); }); // b is a's sibling → NotAChild
 * ```
 */
export class NotAChild extends BobbinError {
  constructor(
    readonly caller: number,
    readonly target: number,
    readonly operation: string,
  ) {
    super(
      `task ${caller} cannot ${operation} task ${target}: only the direct parent may ` +
        `${operation} a task; return the task to its parent, or give it a channel instead`,
    );
  }
}

/**
 * `call`/`parallel` found no domain other than dom0 and the caller to run on.
 *
 * @example
 * ```ts
 * await B.run(main, { domains: 0 });   // B.call(...) inside main throws NoDomainAvailable
 * ```
 */
export class NoDomainAvailable extends BobbinError {
  constructor(
    message = "no domain is available for a parallel task: run with { domains: n } (n ≥ 1), and remember that a task never runs on dom0 or on its caller's domain",
  ) {
    super(message);
  }
}

/**
 * A task returned normally while still owning a resource (see `@bobbin/sync`'s
 * `Ownership`). The resource's finaliser has run; the whole `run` fails.
 *
 * @example
 * ```ts
 * B.spawn(function* () { Ownership.own(Ownership.create(fd, close)); });  // run rejects with ResourceLeaked
 * ```
 */
export class ResourceLeaked extends BobbinError {
  constructor(
    readonly task: number,
    readonly resources: number,
  ) {
    super(
      `task ${task} returned normally while still owning ${resources} resource(s); ` +
        "their finalisers ran. Release (or transfer) every owned resource before returning",
    );
  }
}

/**
 * A resource was checked, disowned or released by a task that does not own it.
 *
 * @example
 * ```ts
 * Ownership.check(resourceOfMyParent);   // throws NotOwner
 * ```
 */
export class NotOwner extends BobbinError {
  constructor(
    readonly task: number,
    message?: string,
  ) {
    super(
      message ??
        `task ${task} does not own this resource: only its owner may use it; pass it with spawn({ give: [r] }, …) or Ownership.transfer`,
    );
  }
}

/**
 * A task suspended on a system call, but `run` was given no events backend to
 * learn when that call is ready.
 *
 * @example
 * ```ts
 * await B.run(function* () { yield* B.suspend(B.syscall()); });   // NoSelectProvided
 * ```
 */
export class NoSelectProvided extends BobbinError {
  constructor() {
    super(
      "a task suspended on a syscall but run() has no events backend: pass " +
        "run(main, { events }) (for sockets and timers use @bobbin/unix's run)",
    );
  }
}

/**
 * Every task of a `run` is suspended and nothing (no syscall, no Promise, no
 * Node handle) can ever wake one of them up.
 *
 * @example
 * ```ts
 * await B.run(function* () { yield* new B.Trigger().wait(); });   // rejects with Deadlock
 * ```
 */
export class Deadlock extends BobbinError {
  constructor(readonly suspended: number) {
    super(
      `${suspended} task(s) are suspended and nothing can wake them up (no pending ` +
        "syscall, promise or Node handle): a trigger, lock or condition is never signalled",
    );
  }
}

/**
 * A value given to, or returned by, a parallel task cannot be copied to
 * another domain (functions, class instances with private state, sockets…).
 *
 * @example
 * ```ts
 * B.call(task, () => 1);   // throws Uncloneable: argument 1 of call(task) cannot be sent
 * ```
 */
export class Uncloneable extends BobbinError {
  constructor(
    readonly what: string,
    reason: string,
  ) {
    super(
      `${what} cannot be sent to another domain (${reason}): pass plain data (structured-cloneable values), and transferables with { transfer }`,
    );
  }
}
