/**
 * `Ownership` (Miou's `Ownership`): resources owned by exactly one task, with
 * a finaliser that runs when the owner ends without releasing them.
 *
 * Built on core's seam only: each task's resources live in a `TaskLocal`
 * slot; an `onSpawn` hook moves the resources of `spawn({ give })` to the
 * child; an `onExit` hook finalises what an ending task still owns and vetoes
 * a normal ending with `ResourceLeaked`. The hooks are registered on the first
 * `Ownership.create`, so programs that never use ownership pay nothing.
 */

import type { SpawnOptions } from "@bobbin/core";
import { Failures, NotOwner, ResourceLeaked, self, type Task, TaskLocal } from "@bobbin/core";
import type { Ending } from "@bobbin/core/lowlevel";
import { givable, onExit, onSpawn } from "@bobbin/core/lowlevel";
import { AlreadyOwned, NoParent } from "./errors.js";

let nextUid = 1;

/**
 * A resource under Miou's ownership discipline: a value plus the finaliser
 * that disposes of it. Make one with {@link Ownership.create}.
 *
 * @example
 * ```ts
 * const r: Resource<number> = Ownership.create(fd, (fd) => fs.closeSync(fd));
 * Ownership.own(r);
 * ```
 * @throws nothing itself; see {@link Ownership} for the rules its functions enforce.
 */
export class Resource<T = unknown> {
  /** Identifies the resource in error messages. */
  readonly uid: number = nextUid++;
  /** @internal */ holder: Task<unknown> | null = null;
  /** @internal */ released = false;

  /** @internal Runs the finaliser on the value (a thunk, so that `Resource<T>` stays covariant in `T`). */
  readonly finalise: () => void;

  /** @internal */
  constructor(
    /** The value the resource stands for (a socket, a file descriptor, a buffer…). */
    readonly value: T,
    finaliser: (value: T) => void,
  ) {
    this.finalise = () => finaliser(value);
  }

  /** The task owning the resource, or `null` (not owned yet, disowned, or released). */
  get owner(): Task<unknown> | null {
    return this.holder;
  }

  /** Marks it as a value `spawn({ give })` moves (see core's `givable`). */
  get [givable](): true {
    return true;
  }

  /** Whether the finaliser has run (by `release`, or because its owner ended). */
  get isReleased(): boolean {
    return this.released;
  }

  toString(): string {
    return `Resource(${this.uid}${this.released ? ", released" : this.holder === null ? ", unowned" : `, owned by task ${this.holder.uid}`})`;
  }
}

/** Each task's owned resources, in the order it came to own them. */
const owned = new TaskLocal<Set<Resource>>("Ownership", () => new Set());
let hooksInstalled = false;

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  onSpawn(giveToChild);
  onExit(finaliseOnExit);
}

/**
 * `spawn({ give: [r] }, fn)`: the spawning task must own every resource
 * `r`; they all move to the child. The spawner is the parent, except for a
 * group's task spawned by another task of the group (`g.spawn`). Core has
 * checked that every element is made to move; those of other packages are
 * theirs to move.
 */
function giveToChild(child: Task, _parent: Task, options: SpawnOptions | undefined, spawner: Task): void {
  const give = options?.give?.filter((r): r is Resource => r instanceof Resource);
  if (give === undefined || give.length === 0) return;
  for (const r of give) if (r.holder !== spawner) throw notOwner(spawner, r, "give");
  const from = owned.get(spawner);
  const to = owned.get(child);
  for (const r of give) {
    from.delete(r);
    to.add(r);
    r.holder = child;
  }
}

/**
 * A task ended: finalise what it still owns. A normal ending that leaks fails
 * with `ResourceLeaked`; after a failure or a cancellation, what finalisers
 * threw joins the task's outcome (see core's `ExitHook`).
 */
function finaliseOnExit(task: Task, ending: Ending): unknown {
  if (!owned.has(task)) return undefined;
  const set = owned.get(task);
  if (set.size === 0) return undefined;
  const leaked = [...set].reverse(); // the last owned is finalised first
  set.clear();
  const errors: unknown[] = [];
  for (const r of leaked) {
    r.holder = null;
    r.released = true;
    try {
      r.finalise();
    } catch (error) {
      errors.push(error);
    }
  }
  if (ending === "resolved") return new ResourceLeaked(task, leaked.length, errors);
  if (errors.length === 0) return undefined;
  return errors.length === 1 ? errors[0] : new Failures(errors);
}

function notOwner(task: Task, r: Resource, operation: string): NotOwner {
  const why = r.released
    ? `resource ${r.uid} was released (its finaliser ran)`
    : r.holder === null
      ? `resource ${r.uid} is owned by no task (own it first)`
      : `resource ${r.uid} is owned by task ${r.holder.uid}`;
  return new NotOwner(
    task.uid,
    `task ${task.uid} cannot ${operation} resource ${r.uid}: ${why}; only its owner may ${operation} it ` +
      "(pass it with spawn({ give: [r] }, …) or Ownership.transfer)",
  );
}

function checkResource(r: unknown, name: string): Resource {
  if (!(r instanceof Resource)) throw new TypeError(`${name} expects a resource made by Ownership.create(value, finally)`);
  return r;
}

/** The current task, which must own `r` (allocates nothing: `check` is on hot paths). */
function mustOwn(r: unknown, name: string, operation: string): Task {
  const res = checkResource(r, name);
  const task = self(`${name}()`);
  if (res.holder !== task) throw notOwner(task, res, operation);
  return task;
}

/**
 * Miou's `Ownership`: a task proves it may use a resource by owning it.
 *
 * - `create(value, finally)` makes a resource (owned by nobody yet); `own(r)`
 *   makes the current task its only owner.
 * - `check(r)` before using it: `NotOwner` unless the current task owns it.
 * - Ownership moves with `spawn({ give: [r] }, fn)` (to the child) and
 *   `transfer(r)` (to the parent); `disown(r)` gives it up without finalising;
 *   `release(r)` runs the finaliser now.
 * - When a task **fails or is cancelled**, the finalisers of the resources it
 *   still owns run (newest first) once its subtree has ended, before its
 *   parent's `cancel`/`await` returns. When a task **returns normally** still
 *   owning resources, their finalisers run too and the whole `run` fails
 *   with `ResourceLeaked`.
 *
 * Finalisers are plain synchronous functions; the others still run when one
 * throws. Its error is carried by `ResourceLeaked` (`errors`, `cause`) after a
 * normal return; after a failure or a cancellation it is the task's outcome
 * (after the task's own error, in a `Failures`, when it failed).
 *
 * @example
 * ```ts
 * const r = Ownership.create(socket, (s) => s.destroy());
 * Ownership.own(r);
 * B.spawn({ give: [r] }, function* () {
 *   Ownership.check(r);           // the child owns it now
 *   yield* serve(r.value);
 *   Ownership.release(r);         // destroys the socket
 * });
 * ```
 * @throws NotOwner, AlreadyOwned, NoParent (see each function); `run` rejects with ResourceLeaked.
 */
export const Ownership = {
  /**
   * Makes a resource for `value` with its finaliser. Nobody owns it until `own`.
   * @example
   * ```ts
   * const r = Ownership.create(fd, fs.closeSync);
   * ```
   * @throws TypeError when `finally` is not a function.
   */
  create<T>(value: T, finally_: (value: T) => void): Resource<T> {
    if (typeof finally_ !== "function")
      throw new TypeError("Ownership.create(value, finally) expects a finaliser function (value) => void");
    installHooks();
    return new Resource(value, finally_);
  },

  /**
   * Makes the current task the owner of `r`.
   * @example
   * ```ts
   * Ownership.own(r);
   * ```
   * @throws AlreadyOwned when a task (this one or another) already owns it.
   * @throws TypeError outside a task, when `r` is not a resource, or when it was released.
   */
  own(r: Resource<unknown>): void {
    const res = checkResource(r, "Ownership.own");
    const task = self("Ownership.own()");
    if (res.released) throw new TypeError(`Ownership.own: resource ${res.uid} was released (its finaliser ran); create a new resource`);
    if (res.holder !== null) throw new AlreadyOwned(task.uid, res.holder.uid, res.uid);
    res.holder = task;
    owned.get(task).add(res);
  },

  /**
   * The current task stops owning `r`, without running its finaliser; any
   * task may `own` it afterwards.
   * @example
   * ```ts
   * Ownership.disown(r);
   * ```
   * @throws NotOwner when the current task does not own it.
   * @throws TypeError outside a task or when `r` is not a resource.
   */
  disown(r: Resource<unknown>): void {
    const task = mustOwn(r, "Ownership.disown", "disown");
    const res = r as Resource;
    owned.get(task).delete(res);
    res.holder = null;
  },

  /**
   * Runs the finaliser of `r` now; the resource is then dead (nobody can own
   * it). The finaliser's error, if any, is thrown here (the resource is
   * released all the same).
   * @example
   * ```ts
   * Ownership.release(r);   // e.g. closes the socket
   * ```
   * @throws NotOwner when the current task does not own it.
   * @throws whatever the finaliser throws.
   * @throws TypeError outside a task or when `r` is not a resource.
   */
  release(r: Resource<unknown>): void {
    const task = mustOwn(r, "Ownership.release", "release");
    const res = r as Resource;
    owned.get(task).delete(res);
    res.holder = null;
    res.released = true;
    res.finalise();
  },

  /**
   * Checks that the current task owns `r` (before using it).
   * @example
   * ```ts
   * Ownership.check(r);
   * socket.write(data);
   * ```
   * @throws NotOwner when the current task does not own it.
   * @throws TypeError outside a task or when `r` is not a resource.
   */
  check(r: Resource<unknown>): void {
    mustOwn(r, "Ownership.check", "use");
  },

  /**
   * Moves the ownership of `r` from the current task to its parent.
   * @example
   * ```ts
   * const [client] = yield* accept(server);
   * Ownership.transfer(client);   // the parent will give it to a handler
   * ```
   * @throws NotOwner when the current task does not own it.
   * @throws NoParent when the current task is the root of its run.
   * @throws TypeError outside a task or when `r` is not a resource.
   */
  transfer(r: Resource<unknown>): void {
    const task = mustOwn(r, "Ownership.transfer", "transfer");
    const res = r as Resource;
    const parent = task.parent;
    if (parent === null) throw new NoParent(task.uid, res.uid);
    owned.get(task).delete(res);
    owned.get(parent).add(res);
    res.holder = parent;
  },

  /**
   * The resources the current task (or `task`) owns, oldest first.
   * @example
   * ```ts
   * console.log(Ownership.owned().length, "resources held");
   * ```
   * @throws TypeError outside a task when no task is given.
   */
  owned(task?: Task<unknown>): Resource<unknown>[] {
    const t = task ?? self("Ownership.owned()");
    return owned.has(t) ? [...owned.get(t)] : [];
  },
};
