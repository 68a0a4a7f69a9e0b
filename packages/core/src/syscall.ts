/**
 * Suspension points (Miou's `syscall`, `suspend`, `signal`): the way a task
 * waits for something only the events backend can observe. They are a layer
 * over the one wake path of the kernel: a task parks on its point like on
 * any operation, and the signals `select` returns wake it through
 * `Kernel.wake`. The driver below connects a backend to a kernel's loop and
 * keeps the points' bookkeeping (how many tasks wait on one, which ones their
 * task left), so that the loop knows of neither.
 */
import { describe } from "./describe.js";
import { NoSelectProvided } from "./errors.js";
import type { Events, Signal, Uid } from "./events.js";
import { broken } from "./kernel/assert.js";
import { currentTask } from "./kernel/current.js";
import { type Driver, Waiting } from "./kernel/host.js";
import { type Kernel, runningKernel } from "./kernel/kernel.js";
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
 * const s: L.Syscall = L.syscall("accept");
 * yield* L.suspend(s, () => listeners.set(s.uid, fd));
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
    const driver = k.driver as EventsDriver | null;
    if (driver === null) throw new NoSelectProvided();
    if (this.signalled) return DONE_VOID;
    if (this.parked) throw new TypeError(`syscall ${this.uid} (${this.name}) is already suspended on`);
    // Registered before parking: a register that throws leaves nothing parked,
    // and one that signals at once makes the suspension return at once.
    this.register?.(this);
    if (this.signalled) return DONE_VOID;
    this.parked = true;
    k.park(task, this);
    driver.parked++;
    return SUSPENDED;
  }

  /** @internal The backend signalled this point. */
  fire(): void {
    if (this.cancelled || this.signalled) return;
    this.signalled = true;
    if (!this.parked) return; // ready before its task suspended on it
    this.parked = false;
    (this.kernel.driver as EventsDriver).fired();
    this.kernel.wake(this.owner, RESUMED);
  }

  /** @internal The owner is woken to leave while suspended here (cancelled or interrupted). */
  detach(): void {
    this.parked = false;
    this.cancelled = true;
    (this.kernel.driver as EventsDriver).left(this.uid);
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
 * const s = L.syscall("read fd 7");
 * yield* L.suspend(s, () => waiting.set(L.uid(s), fd));
 * ```
 * @throws TypeError outside a task.
 */
export function syscall(name = "syscall"): Syscall {
  const task = currentTask("syscall()");
  return new Syscall(task, runningKernel()!, String(name));
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
 * const s = L.syscall("accept");
 * yield* L.suspend(s, (s) => readers.set(L.uid(s), fd));
 * ```
 * @throws NoSelectProvided when `run` has no events backend.
 * @throws TypeError when `s` belongs to another task, or `register` is not a function.
 * @throws Cancelled when the task is cancelled while suspended (the uid is then
 * reported once in `select`'s `cancelled`).
 */
export function suspend(s: Syscall, register?: (s: Syscall) => void): Syscall {
  if (!(s instanceof Syscall)) throw new TypeError("suspend(s) expects a suspension point made by syscall() of @bobbin/core/lowlevel");
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
 * select: () => ready.splice(0).map((s) => L.signal(s)),
 * ```
 * @throws TypeError when `s` is not a suspension point.
 */
export function signal(s: Syscall): Signal {
  if (!(s instanceof Syscall)) throw new TypeError("signal(s) expects a suspension point made by syscall() of @bobbin/core/lowlevel");
  return s as unknown as Signal;
}

/**
 * The identifier of a suspension point, as the backend sees it in `cancelled`.
 *
 * @example
 * ```ts
 * const s = L.syscall(); table.set(L.uid(s), fd);
 * ```
 * @throws TypeError when `s` is not a suspension point.
 */
export function uid(s: Syscall): Uid {
  if (!(s instanceof Syscall)) throw new TypeError("uid(s) expects a suspension point made by syscall() of @bobbin/core/lowlevel");
  return s.uid;
}

/**
 * @internal An events backend connected to a kernel's loop: its `select`
 * answers wake the tasks parked on the points they signal, its code runs
 * guarded (what it throws fails the run naming it), and the points' counts
 * tell the loop when to poll. Every kernel with a backend has one (the
 * kernel's `driver`).
 */
export class EventsDriver implements Driver {
  /** Tasks parked on a suspension point of this domain. */
  parked = 0;
  /** Points whose task left while parked (cancelled or interrupted), for the next `select`. */
  private cancelled: Uid[] = [];
  readonly batchWakes: boolean;

  constructor(
    private readonly kernel: Kernel,
    readonly events: Events,
  ) {
    this.batchWakes = events.batchWakes === true;
  }

  /** A parked point was signalled: its task is woken by the caller. */
  fired(): void {
    if (__BOBBIN_DEV__ && this.parked <= 0) broken(this.kernel, "counts a signalled syscall with none parked");
    this.parked--;
  }

  /** A parked point's task left: the next `select` hears of it. */
  left(uid: Uid): void {
    if (__BOBBIN_DEV__ && this.parked <= 0) broken(this.kernel, "counts a left syscall with none parked");
    this.parked--;
    this.cancelled.push(uid);
  }

  waiting(): Waiting {
    if (this.parked !== 0 || this.cancelled.length !== 0) return Waiting.Polled;
    const events = this.events;
    if (events.pending === undefined) return Waiting.Nothing;
    try {
      return events.pending() === true ? Waiting.Woken : Waiting.Nothing;
    } catch (error) {
      this.kernel.life.callbackFailed("the events backend's pending", error);
      return Waiting.Nothing;
    }
  }

  poll(block: boolean): Promise<void> | undefined {
    let signals: unknown;
    try {
      signals = this.events.select(block, this.takeCancelled());
    } catch (error) {
      this.kernel.life.callbackFailed("the events backend's select", error);
      return undefined;
    }
    if (!(signals instanceof Promise)) {
      this.apply(signals);
      return undefined;
    }
    return signals.then(
      (answer: unknown) => this.settled(answer, null),
      (error: unknown) => this.settled(null, error),
    );
  }

  interrupt(): void {
    try {
      this.events.interrupt();
    } catch (error) {
      this.kernel.life.callbackFailed("the events backend's interrupt", error);
    }
  }

  finish(): void {
    const life = this.kernel.life;
    if (this.cancelled.length !== 0) {
      try {
        const last = this.events.select(false, this.takeCancelled());
        if (last instanceof Promise) last.catch(() => undefined);
      } catch (error) {
        life.callbackFailedAtEnd("the events backend's select", error);
      }
    }
    const finaliser = this.events.finaliser;
    if (finaliser === undefined) return;
    try {
      finaliser.call(this.events);
    } catch (error) {
      life.callbackFailedAtEnd("the events backend's finaliser", error);
    }
  }

  /** The cancelled points for `select`, each reported once. */
  private takeCancelled(): Uid[] {
    const cancelled = this.cancelled;
    if (cancelled.length !== 0) this.cancelled = [];
    return cancelled;
  }

  /** A Promise-returning `select` settled. */
  private settled(answer: unknown, error: unknown): void {
    try {
      if (error !== null) this.kernel.life.callbackFailed("the events backend's select (its Promise)", error);
      else this.apply(answer);
    } catch (escaped) {
      this.kernel.life.internalError(escaped);
    }
  }

  /** Fires the suspension points `select` reported, after checking that they are signals of this domain. */
  private apply(signals: unknown): void {
    if (!Array.isArray(signals)) {
      this.notSignals(`returned ${describe(signals)}, not an array of signals`);
      return;
    }
    if (signals.length !== 0) this.kernel.recorder?.io(signals.length);
    for (let i = 0; i < signals.length; i++) {
      const s: Signal | unknown = signals[i];
      if (!(s instanceof Syscall) || s.kernel !== this.kernel) {
        this.notSignals(`returned ${describe(s)} at index ${i}, not a signal of this domain`);
        continue;
      }
      s.fire();
    }
  }

  private notSignals(what: string): void {
    this.kernel.life.callbackFailed(
      "the events backend's select",
      new TypeError(`select ${what}: return signal(s) for the suspension points (syscall()) of this domain's tasks`),
    );
  }
}
