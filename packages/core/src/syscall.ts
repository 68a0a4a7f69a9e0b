/**
 * Suspension points (Miou's `syscall`, `suspend`, `signal`): the way a task
 * waits for something only the events backend can observe.
 */
import { NoSelectProvided } from "./errors.js";
import type { Signal, Uid } from "./events.js";
import { currentKernel, currentTask } from "./kernel/current.js";
import type { Kernel } from "./kernel/kernel.js";
import type { Task } from "./kernel/task.js";
import { DONE_VOID, type Instruction, type Operation, RESUMED, SingleShot, SUSPENDED } from "./operation.js";

let nextUid = 1;

/**
 * A suspension point owned by the task (and domain) that created it; make
 * one with {@link syscall}. It is itself the operation {@link suspend}
 * returns.
 *
 * @example
 * ```ts
 * const s: B.Syscall = B.syscall("accept");
 * yield* B.suspend(s, () => listeners.set(s.uid, fd));
 * ```
 */
// The cast is erased from the JavaScript; it makes the published declaration
// show an `Operation<void>` rather than the internal base class.
export class Syscall extends (SingleShot as abstract new () => Operation<void>) {
  /** Identifies the point to the events backend. */
  readonly uid: Uid = nextUid++;
  /** @internal */ readonly owner: Task;
  /** @internal */ readonly kernel: Kernel;
  /** @internal */ register: ((s: Syscall) => void) | undefined = undefined;
  /**
   * @internal Reported ready. As Miou's, a point stays signalled: suspending on
   * it again returns at once (whether the signal came before or during a suspension).
   */
  private signalled = false;
  /** @internal */ private parked = false;
  /** @internal Its task was cancelled while suspended here: later signals are ignored. */
  private cancelled = false;

  /** @internal */
  constructor(
    owner: Task,
    kernel: Kernel,
    readonly name: string,
  ) {
    super();
    this.owner = owner;
    this.kernel = kernel;
  }

  /** @internal */
  next(resumed?: unknown): IteratorResult<Instruction, void> {
    if (resumed !== undefined) return DONE_VOID;
    const task = currentTask("suspend()");
    if (task !== this.owner) {
      throw new TypeError(
        `syscall ${this.uid} (${this.name}) belongs to ${this.owner}, not to ${task}: ` +
          "only the task that created a suspension point may suspend on it",
      );
    }
    const k = this.kernel;
    if (k.events === null) throw new NoSelectProvided();
    if (this.signalled) return DONE_VOID;
    if (this.parked) throw new TypeError(`syscall ${this.uid} (${this.name}) is already suspended on`);
    // Registered before parking: a register that throws leaves nothing parked,
    // and one that signals at once makes the suspension return at once.
    this.register?.(this);
    if (this.signalled) return DONE_VOID;
    this.parked = true;
    k.park(task, this);
    k.syscallParked();
    return SUSPENDED;
  }

  /** @internal The backend signalled this point. */
  fire(): void {
    if (this.cancelled || this.signalled) return;
    this.signalled = true;
    if (!this.parked) return; // ready before its task suspended on it
    this.parked = false;
    this.kernel.syscallFired();
    this.kernel.wake(this.owner, RESUMED);
  }

  /** @internal The owner is woken to leave while suspended here (cancelled or interrupted). */
  detach(): void {
    this.parked = false;
    this.cancelled = true;
    this.kernel.syscallCancelled(this.uid);
  }

  /** @internal */
  describe(): string {
    return `syscall ${this.name}`;
  }
}

/**
 * Creates a suspension point for the current task (Miou's `Miou.make`).
 *
 * @example
 * ```ts
 * const s = B.syscall("read fd 7");
 * yield* B.suspend(s, () => waiting.set(B.uid(s), fd));
 * ```
 * @throws TypeError outside a task.
 */
export function syscall(name = "syscall"): Syscall {
  const task = currentTask("syscall()");
  return new Syscall(task, currentKernel!, String(name));
}

/**
 * Parks the current task until the events backend returns `signal(s)`.
 * `register` runs as the task suspends: register the real operation there
 * (if `s` is signalled while it runs, the task does not park at all). As in
 * Miou, a point once signalled stays signalled: suspending on it again
 * returns at once, so wait for the next readiness on a new `syscall()`.
 *
 * @example
 * ```ts
 * const s = B.syscall("accept");
 * yield* B.suspend(s, (s) => readers.set(B.uid(s), fd));
 * ```
 * @throws NoSelectProvided when `run` has no events backend.
 * @throws TypeError when `s` belongs to another task, or `register` is not a function.
 * @throws Cancelled when the task is cancelled while suspended (the uid is then
 * reported once in `select`'s `cancelled`).
 */
export function suspend(s: Syscall, register?: (s: Syscall) => void): Syscall {
  if (!(s instanceof Syscall)) throw new TypeError("suspend(s) expects a suspension point made by B.syscall()");
  if (register !== undefined && typeof register !== "function")
    throw new TypeError("suspend(s, register) expects register to be a function");
  s.register = register;
  return s;
}

/**
 * The signal an events backend returns from `select` for a ready point.
 *
 * @example
 * ```ts
 * select: () => ready.splice(0).map((s) => B.signal(s)),
 * ```
 * @throws TypeError when `s` is not a suspension point.
 */
export function signal(s: Syscall): Signal {
  if (!(s instanceof Syscall)) throw new TypeError("signal(s) expects a suspension point made by B.syscall()");
  return s as unknown as Signal;
}

/**
 * The identifier of a suspension point, as the backend sees it in `cancelled`.
 *
 * @example
 * ```ts
 * const s = B.syscall(); table.set(B.uid(s), fd);
 * ```
 * @throws TypeError when `s` is not a suspension point.
 */
export function uid(s: Syscall): Uid {
  if (!(s instanceof Syscall)) throw new TypeError("uid(s) expects a suspension point made by B.syscall()");
  return s.uid;
}
