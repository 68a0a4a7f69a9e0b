/**
 * The events half of the poll backend: Miou's contract, and nothing else.
 *
 * A task that cannot go on makes a suspension point (`L.syscall()`) and
 * parks on it (`L.suspend`), registering an {@link Interest}: "wake me when
 * this socket is readable" (or writable, or released). That is Miou_unix's
 * table of readers and writers, keyed here by the syscall's uid.
 *
 * Node's callbacks never wake a task. They only *touch* the socket they are
 * about (a chunk arrived, a connection came, a write was flushed), as a
 * kernel marks a descriptor whose state changed. `select` then polls each
 * touched socket — "are you readable now?" — and returns a `L.signal` for
 * every interest whose answer is yes: the scheduler resumes those tasks,
 * which try their operation again. Readiness is level-triggered: it is a
 * question asked of the socket's state, never an event that could be
 * consumed by the wrong task or lost, so two readers of one socket may both
 * be signalled and the loser simply parks again.
 *
 * The rest is the contract's own:
 * - `cancelled`: the uids of suspension points whose task was cancelled (or
 *   interrupted by a `withTimeout` deadline). They are cleaned up here, at
 *   the start of `select`, before anything is polled, so a stale interest is
 *   never signalled by the `select` that hears of it.
 * - blocking: with `block` and nothing ready, `select` returns a Promise. A
 *   Node thread cannot sleep in a system call without stopping its event
 *   loop, so the "wait" is the loop itself: touches and timers settle the
 *   Promise, batched per phase of the loop (one `setImmediate`), so a burst
 *   of callbacks costs one `select`.
 * - `interrupt`: settles a pending `select` at once, with whatever is ready
 *   (possibly nothing). Core calls it when a task is woken from elsewhere: a
 *   `withTimeout` deadline, another domain, a `Trigger`.
 */
import type * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";

/**
 * What a parked task waits for, as poll(2)'s `POLLIN` / `POLLOUT`, plus the end of a closing.
 *
 * @example
 * ```ts
 * yield* poller.wait(sock, "writable", "connect");
 * ```
 */
export type Readiness = "readable" | "writable" | "released";

/**
 * A thing `select` can poll: a socket of this backend.
 *
 * @example
 * ```ts
 * isReady(event) { return event === "readable" ? this.buffered !== 0 : this.unacknowledged === 0; }
 * ```
 */
export interface Pollable {
  /** Whether `event` holds now (asked by `select`, for the interests parked on it). */
  isReady(event: Readiness): boolean;
  /** The interests parked on it, in the order they came (kept by the poller). */
  readonly interests: Interest[];
}

/**
 * One parked wait: the syscall to signal, the socket and the event it waits for.
 *
 * @example
 * ```ts
 * const interest: Interest = { syscall: L.syscall("read"), target: sock, event: "readable" };
 * ```
 */
export interface Interest {
  readonly syscall: L.Syscall;
  readonly target: Pollable;
  readonly event: Readiness;
}

/**
 * What the poller did, for the curious (the example program prints it) and
 * the tests.
 *
 * @example
 * ```ts
 * console.log(`${poller.stats.forgotten} cancelled syscalls forgotten in select`);
 * ```
 */
export interface PollerStats {
  /** Calls of `select`. */
  selects: number;
  /** Of those, how many returned a Promise (nothing was ready and `block` was set). */
  blocked: number;
  /** Signals returned, all `select`s together. */
  signals: number;
  /** Interests dropped because their syscall came back in `cancelled`. */
  forgotten: number;
  /** Calls of `interrupt` that settled a pending `select`. */
  interrupts: number;
}

const NOTHING: L.Signal[] = [];

/**
 * Miou's `select` and `interrupt` over sockets that Node's callbacks touch.
 *
 * @example
 * ```ts
 * const poller = new Poller();
 * // in an operation, when the socket has nothing to read yet:
 * yield* poller.wait(sock, "readable", "read");
 * // in a Node callback of that socket:
 * poller.touch(sock);
 * // the backend's events:
 * select: (block, cancelled) => poller.select(block, cancelled),
 * ```
 * @throws never: `select`'s Promise is settled, never rejected.
 */
export class Poller {
  readonly stats: PollerStats = { selects: 0, blocked: 0, signals: 0, forgotten: 0, interrupts: 0 };
  /** Every parked interest, by its syscall's uid: what `cancelled` names. */
  private readonly waiting = new Map<L.Uid, Interest>();
  /** Sockets touched since the last poll, with interests parked on them. */
  private readonly touched = new Set<Pollable>();
  /** Suspension points ready without a socket (sleepers whose time came). */
  private due: L.Signal[] = [];
  /** Settles the pending `select`, if one waits. */
  private settle: ((signals: L.Signal[]) => void) | null = null;
  private flushScheduled = false;
  private readonly flushFn = (): void => this.flush();

  /** How many interests are parked (the tests watch it go back to 0). */
  get size(): number {
    return this.waiting.size;
  }

  /**
   * Parks the current task until `target` is ready for `event`: one
   * suspension point, registered as the task suspends (`L.suspend`'s
   * callback), so nothing is registered if the suspension does not happen.
   * The caller tries its operation again afterwards: a signal says "poll
   * again", not "it worked".
   *
   * @throws Cancelled (or a `withTimeout`'s `Timeout`) when the task stops
   * waiting: the interest stays until `select` hears of the uid.
   */
  *wait(target: Pollable, event: Readiness, name: string): Generator<B.Instruction, void, unknown> {
    const syscall = L.syscall(name);
    yield* L.suspend(syscall, () => this.watch({ syscall, target, event }));
  }

  /** Registers a parked interest (from `wait`). */
  private watch(interest: Interest): void {
    this.waiting.set(L.uid(interest.syscall), interest);
    interest.target.interests.push(interest);
  }

  /**
   * A Node callback changed `target`'s state: the next poll asks its
   * interests again, and a pending `select` is settled at the end of this
   * phase of Node's loop. A socket nobody waits on is not polled: an
   * operation always tries before it parks.
   */
  touch(target: Pollable): void {
    if (target.interests.length === 0) return;
    this.touched.add(target);
    this.wake();
  }

  /** A suspension point ready on its own (a sleeper whose time came): signalled by the next `select`. */
  ready(syscall: L.Syscall): void {
    this.due.push(L.signal(syscall));
    this.wake();
  }

  /** Core's `select`: forget the cancelled, poll the touched, and wait (a Promise) when nothing is ready and `block` says so. */
  select(block: boolean, cancelled: readonly L.Uid[]): L.Signal[] | Promise<L.Signal[]> {
    this.stats.selects++;
    this.forget(cancelled);
    const signals = this.poll();
    if (signals.length !== 0 || !block) return signals;
    this.stats.blocked++;
    return new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  /** Core's `interrupt`: a pending `select` returns now, with what is ready. */
  interrupt(): void {
    if (this.settle === null) return;
    this.stats.interrupts++;
    this.answer(this.poll());
  }

  /** The domain stops: a pending `select` returns with nothing, and every interest is dropped. */
  stop(): void {
    this.answer(NOTHING);
    for (const interest of this.waiting.values()) interest.target.interests.length = 0;
    this.waiting.clear();
    this.touched.clear();
    this.due = [];
  }

  /** The book's `clean`: interests whose task left are dropped before anything is polled. */
  private forget(cancelled: readonly L.Uid[]): void {
    for (const uid of cancelled) {
      const interest = this.waiting.get(uid);
      if (interest === undefined) continue; // a sleeper, or signalled just before its task left
      this.waiting.delete(uid);
      const list = interest.target.interests;
      list.splice(list.indexOf(interest), 1);
      this.stats.forgotten++;
    }
  }

  /** Asks every touched socket about the interests parked on it; the ready ones leave the table as signals. */
  private poll(): L.Signal[] {
    const signals = this.due;
    if (signals.length !== 0) this.due = [];
    for (const target of this.touched) {
      const list = target.interests;
      let kept = 0;
      for (const interest of list) {
        if (target.isReady(interest.event)) {
          this.waiting.delete(L.uid(interest.syscall));
          signals.push(L.signal(interest.syscall));
        } else list[kept++] = interest;
      }
      list.length = kept;
    }
    this.touched.clear();
    this.stats.signals += signals.length;
    return signals;
  }

  /** Something may be ready: a pending `select` polls once this phase of Node's loop is over. */
  private wake(): void {
    if (this.settle === null || this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(this.flushFn);
  }

  /** Polls for the pending `select`; it keeps waiting when the touches made nothing ready. */
  private flush(): void {
    this.flushScheduled = false;
    if (this.settle === null) return;
    const signals = this.poll();
    if (signals.length !== 0) this.answer(signals);
  }

  private answer(signals: L.Signal[]): void {
    const settle = this.settle;
    this.settle = null;
    settle?.(signals);
  }
}
