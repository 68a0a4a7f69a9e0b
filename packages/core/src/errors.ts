/**
 * The error classes of the runtime. Each has a stable `name`, so code can test
 * `error.name === "Cancelled"` across realms and worker threads as well as with
 * `instanceof`.
 */

import type { Dump } from "./diagnostics/dump-data.js";
import { formatDump, formatFlight } from "./diagnostics/format.js";
import type { DomainFlight } from "./kernel/flight.js";

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
  constructor(message = "the task was cancelled", options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * A task returned normally while one of its children was neither awaited nor
 * cancelled (Miou's first rule). Fails the whole `run`; the task cannot catch it.
 * It says how each of those children stood: a child that had failed keeps its
 * error, in `outcomes`, in `errors` (every failed child's, in order), as the
 * `cause` (the first of them) and in the message — so an error nobody awaited
 * is not lost.
 *
 * @example
 * ```ts
 * await B.run(function* () { B.spawn(child); });   // rejects with StillHasChildren
 * // main#1 returned while its children [loadConfig#2 (failed: Error: cannot parse config)] were still …
 * ```
 */
export class StillHasChildren extends BobbinError {
  /** The uid of the task that returned. */
  readonly task: number;
  /** The uids of its children that were still alive or unconsumed. */
  readonly children: readonly number[];
  /** How each of those children stood when the task returned. */
  readonly outcomes: readonly ChildOutcome[];
  /** The errors of the children that had failed, or failed while they were cancelled, in the order of `outcomes`. */
  readonly errors: readonly unknown[];
  /** `name#uid` of the task that returned, for the message. */
  private readonly taskName: string;

  constructor(task: TaskName, children: readonly ChildOutcome[]) {
    const errors = errorsOf(children);
    super(stillHasChildrenMessage(String(task), children), errors.length === 0 ? undefined : { cause: errors[0] });
    this.taskName = String(task);
    this.task = task.uid;
    this.children = children.map((c) => c.uid);
    this.outcomes = children;
    this.errors = errors;
  }

  /**
   * @internal A child still running when the task returned was cancelled, and
   * its cleanup failed with `error`: it is reported here too (the run has not
   * settled yet, so nobody has seen this error).
   */
  childFailed(uid: number, error: unknown): void {
    const outcomes = this.outcomes.map((c) => (c.uid === uid ? { ...c, error } : c));
    const errors = errorsOf(outcomes);
    const self = this as { outcomes: readonly ChildOutcome[]; errors: readonly unknown[] };
    self.outcomes = outcomes;
    self.errors = errors;
    this.cause = errors[0];
    this.message = stillHasChildrenMessage(this.taskName, outcomes);
  }
}

function errorsOf(children: readonly ChildOutcome[]): unknown[] {
  return children.filter((c) => c.status === "failed" || (c.status === "pending" && "error" in c)).map((c) => c.error);
}

function stillHasChildrenMessage(task: string, children: readonly ChildOutcome[]): string {
  return (
    `${task} returned while its children [${children.map(describeOutcome).join(", ")}] were still ` +
    "alive or unconsumed: await or cancel every child before returning " +
    "(for background tasks, use orphans() and care())"
  );
}

/**
 * How a child stood when its parent ended: see {@link StillHasChildren}.
 *
 * @example
 * ```ts
 * for (const o of error.outcomes) if (o.status === "failed") console.error(o.task, o.error);
 * ```
 */
export interface ChildOutcome {
  /** The child, as `name#uid`. */
  readonly task: string;
  readonly uid: number;
  /** `"pending"` while it (or its subtree) still ran, or had not started; otherwise how it ended. */
  readonly status: "pending" | "resolved" | "failed" | "cancelled";
  /**
   * For a `"pending"` child: whether its body had begun to run. A child
   * spawned just before its parent returned has not (spawn queues it): it is
   * then cancelled without running.
   */
  readonly started?: boolean;
  /**
   * What it failed with (`"failed"`, `"cancelled"`); for a child still running
   * (`"pending"`), what it threw when it was then cancelled, if anything.
   */
  readonly error?: unknown;
}

function describeOutcome(child: ChildOutcome): string {
  if (child.status === "pending") {
    if (child.started === false) return `${child.task} (never started)`;
    return "error" in child
      ? `${child.task} (still running, then failed while cancelled: ${describeError(child.error)})`
      : `${child.task} (still running)`;
  }
  if (child.status === "failed") return `${child.task} (failed: ${describeError(child.error)})`;
  return `${child.task} (${child.status}, not awaited)`;
}

/** What errors need of a task: its uid, and `name#uid` from `toString` (a `Task` has both). */
export interface TaskName {
  readonly uid: number;
  toString(): string;
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
  /** The uid of the task that tried. */
  readonly caller: number;
  /** The uid of the task it tried to await or cancel. */
  readonly target: number;

  constructor(
    caller: TaskName,
    target: TaskName,
    readonly operation: string,
  ) {
    super(
      `${caller} cannot ${operation} ${target}: only the direct parent may ${operation} a task; ` +
        "return the task to its parent, or send results back through a @bobbin/sync Channel or MVar",
    );
    this.caller = caller.uid;
    this.target = target.uid;
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
 * `Ownership`). The resources' finalisers have run; the whole `run` fails. A
 * finaliser that threw is not lost: its error is in `errors`, is the `cause`
 * (the first of them) and is named in the message.
 *
 * @example
 * ```ts
 * B.spawn(function* () { Ownership.own(Ownership.create(fd, close)); });  // run rejects with ResourceLeaked
 * ```
 */
export class ResourceLeaked extends BobbinError {
  /** The uid of the task that returned. */
  readonly task: number;
  /** What the finalisers of the leaked resources threw, if anything. */
  readonly errors: readonly unknown[];

  constructor(
    task: TaskName | number,
    /** How many resources it still owned. */
    readonly resources: number,
    errors: readonly unknown[] = [],
  ) {
    super(
      `${typeof task === "number" ? `task ${task}` : task} returned normally while still owning ${resources} resource(s); ` +
        `their finalisers ran${errors.length === 0 ? "" : ` (${errors.length} threw: ${errors.map(describeError).join("; ")})`}. ` +
        "Release (or transfer) every owned resource before returning",
      errors.length === 0 ? undefined : { cause: errors[0] },
    );
    this.task = typeof task === "number" ? task : task.uid;
    this.errors = errors;
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
 * await B.run(function* () { yield* L.suspend(L.syscall()); });   // NoSelectProvided
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
 * The tasks of a `run` wait and nothing can wake them: Node's loop has
 * nothing left to do (no syscall, timer, socket, Promise with work behind it,
 * signal handler or worker), or tasks wait for each other in a cycle (locks
 * held, children awaited) that no task is left to break. `cycle` names the
 * cycle, if there is one; `dump` is the task tree when it was found (see
 * `B.dump()`), also printed in the message.
 *
 * @example
 * ```ts
 * await B.run(function* () { yield* new L.Trigger().wait(); });   // rejects with Deadlock
 * // a cycle: "a#2 (lock Mutex#1 held by b#3) → b#3 (lock Mutex#2 held by a#2) → a#2"
 * ```
 */
export class Deadlock extends BobbinError {
  /** The cycle of waits, if the deadlock has one: each task with what it waits on, in order. */
  readonly cycle: string | null;
  /** The task tree when the deadlock was found (this domain's). */
  readonly dump: Dump | null;

  constructor(
    readonly suspended: number,
    details: { readonly dump?: Dump | null; readonly cycle?: string | null } = {},
  ) {
    const cycle = details.cycle ?? null;
    const dump = details.dump ?? null;
    super(
      (cycle === null
        ? `${suspended} task(s) are suspended and nothing can wake them up (no pending ` +
          "syscall, timer, socket, signal handler, other domain or promise with work behind it): " +
          "a trigger, lock or condition is never signalled, or a promise never settles"
        : `tasks wait for each other in a cycle and no task is left to break it: ${cycle}. ` +
          "Take locks in one order everywhere, and never await a child while holding a lock it needs") +
        (dump === null ? "" : `\n${formatDump(dump)}`),
    );
    this.cycle = cycle;
    this.dump = dump;
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

/**
 * Code the kernel calls but does not own threw: an `onCancellation` handler,
 * a tick, spawn-time or exit hook, a tracer, a scheduling policy, or the
 * events backend's `select`, `interrupt` or `finaliser` (or `select` returned
 * something that is not a list of signals). The run fails with it; `source`
 * names the culprit and `cause` is what it threw.
 *
 * @example
 * ```ts
 * yield* B.protect({ onCancellation: () => { throw new Error("oops"); } }, body);
 * // when cancelled: the task is still cancelled, and run rejects with
 * // CallbackFailed: the onCancellation handler of protect in body#3 threw: oops
 * ```
 */
export class CallbackFailed extends BobbinError {
  constructor(
    readonly source: string,
    override readonly cause: unknown,
  ) {
    super(`${source} threw: ${describeError(cause)}`, { cause });
  }
}

/**
 * The kernel itself failed: a bug in Bobbin, not in the program. The run is
 * settled with this error (and its domains stopped) rather than left hanging;
 * please report it with its `cause`'s stack, and its `flight` — the last
 * kernel events of its domain, when the run keeps a flight recorder (`run`'s
 * `flightRecorder`), also printed in its message.
 *
 * @example
 * ```ts
 * try { await B.run(main); } catch (e) { if (e instanceof B.InternalError) report(e.cause); }
 * ```
 */
export class InternalError extends BobbinError {
  constructor(
    override readonly cause: unknown,
    /** The flight recorder of the domain that failed, when the run keeps one. */
    readonly flight: DomainFlight | null = null,
  ) {
    super(
      `Bobbin's kernel failed (this is a bug in Bobbin, please report it): ${describeError(cause)}` +
        (flight === null ? "" : `\n${formatFlight(flight).join("\n")}`),
      { cause },
    );
  }
}

/**
 * An event stream (`B.on`) received more events than its buffer holds before
 * the task read them: it stopped listening, and reading it throws this error
 * once the buffered events are read.
 *
 * @example
 * ```ts
 * const data = B.on(socket, "data", { capacity: 64 });
 * // … the task does not read for a while, and a 65th "data" event arrives:
 * yield* data.next();   // the 64 buffered events, then throws EventOverflow
 * ```
 */
export class EventOverflow extends BobbinError {
  constructor(
    readonly event: string,
    readonly capacity: number,
  ) {
    super(
      `more than ${capacity} "${event}" event(s) arrived before they were read, so the stream stopped listening: ` +
        "read it sooner, or give B.on a larger capacity",
    );
  }
}

/**
 * Several errors that one outcome must report, the first failure first: a
 * group's (or `all`'s) first failure and the errors its other tasks threw
 * while they were cancelled; a task's own error and those of its children's
 * cleanup; a `protect` body's error and its `finally`'s. One error alone is
 * always reported as itself, never wrapped. A `Failures` never holds another
 * (their errors are listed in its place) nor the same error twice.
 *
 * @example
 * ```ts
 * try {
 *   yield* B.group(function* (g) { g.spawn(writer); g.spawn(reader); });
 * } catch (e) {
 *   for (const error of e instanceof B.Failures ? e.errors : [e]) console.error(error);
 * }
 * ```
 * @throws never.
 */
export class Failures extends BobbinError {
  /** The errors, the first failure first (also the `cause`). */
  readonly errors: readonly unknown[];

  constructor(errors: readonly unknown[]) {
    const flat = flatten(errors);
    super(`${flat.length} errors, the first first: ${flat.map(describeError).join("; ")}`, { cause: flat[0] });
    this.errors = flat;
  }
}

function flatten(errors: readonly unknown[]): unknown[] {
  const flat: unknown[] = [];
  for (const error of errors) {
    for (const e of error instanceof Failures ? error.errors : [error]) if (!flat.includes(e)) flat.push(e);
  }
  return flat;
}

/**
 * @internal What an outcome with these errors throws: the error itself when
 * there is one (a `Failures` included), a {@link Failures} of them all
 * (flattened) when there are several. `errors` must not be empty.
 */
export function failureOf(errors: readonly unknown[]): unknown {
  if (errors.length === 1) return errors[0];
  const flat = flatten(errors);
  return flat.length === 1 ? flat[0] : new Failures(flat);
}

/** @internal A thrown value in a few words, for messages. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message === "" ? error.name : `${error.name}: ${error.message}`;
  try {
    return String(error);
  } catch {
    return Object.prototype.toString.call(error);
  }
}

/**
 * A worker domain did not end a cancelled parallel task within the grace
 * period (`run`'s `cancelGraceMs`): typically a task stuck in a synchronous
 * loop, which never reaches a suspension point where `Cancelled` could be
 * delivered. The domain is terminated and the run fails with this error.
 *
 * @example
 * ```ts
 * // spin = B.defineTask(url, "spin", function* () { for (;;); });
 * await B.run(function* () { yield* B.cancel(B.call(spin)); }, { domains: 1, cancelGraceMs: 500 });
 * // rejects: DomainUnresponsive: domain 1 did not end spin#2 within 500 ms of its cancellation …
 * ```
 */
export class DomainUnresponsive extends BobbinError {
  constructor(
    readonly domain: number,
    readonly task: string,
    readonly graceMs: number,
  ) {
    super(
      `domain ${domain} did not end ${task} within ${graceMs} ms of its cancellation, so it was terminated: ` +
        "a parallel task must reach a suspension point (yield* B.yieldNow() in long loops) to hear a cancellation",
    );
  }
}
