/**
 * Chapter 7, "Interacting with the system with Miou": the book's `Chat`
 * module, sleepers written against core's events contract.
 *
 * - a **priority queue** of sleepers, the soonest first;
 * - **per-domain state**: every domain has its own queue (a suspension point
 *   belongs to the domain that made it, and only that domain's `select`
 *   signals it). The book uses OCaml's domain-local storage; a worker thread
 *   has its own copy of every module, so here the state is simply this
 *   module's, made by the domain's events factory;
 * - **cancelled sleepers**: `select` is told which suspension points were
 *   cancelled; their sleepers are marked and skipped (only the minimum can
 *   be removed from the queue);
 * - **interrupt through a pipe**: the book's `select` waits in `Unix.select`
 *   on the read end of a pipe, with the time to the next sleeper as timeout,
 *   and `interrupt` writes a byte into the pipe to end the wait early. A Node
 *   thread cannot wait on a file descriptor without blocking its event loop
 *   (and with it the messages from other domains that say a task was
 *   cancelled); what it waits on is a Promise. So the pipe is {@link Pipe}:
 *   `interrupt` writes into it, `select` returns a Promise settled by the
 *   timer of the next sleeper or by a write, whichever comes first, and then
 *   consumes every byte written (unneeded interruptions are ignored, as in
 *   the book). Core calls `interrupt` when a task of a domain whose `select`
 *   is pending is woken: by a cancellation from another domain, for example.
 *
 * Times are read from `performance.now()`, a monotonic clock, where the book
 * uses `Unix.gettimeofday`; durations are in seconds, as in the book.
 */
import type * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { Pqueue } from "./pqueue.js";

/** A sleeping task: when to wake it, its suspension point, and whether it was cancelled. */
interface Sleeper {
  readonly time: number;
  readonly syscall: L.Syscall;
  cancelled: boolean;
}

const now = (): number => performance.now();
const inThePast = (time: number): boolean => time <= now();

/**
 * The book's interrupt pipe, for a thread whose waits are Promises: bytes
 * written by `interrupt`, a reader (the pending `select`) woken by the first
 * write, and `consume` to drain every byte at once.
 */
export class Pipe {
  private bytes = 0;
  private reader: (() => void) | null = null;

  /** Writes one byte (the book's `Unix.write oc buf 0 1`); wakes the reader, if any. */
  write(): void {
    this.bytes++;
    const reader = this.reader;
    this.reader = null;
    reader?.();
  }

  /** Whether bytes were written and not consumed yet (the read end is readable). */
  get readable(): boolean {
    return this.bytes > 0;
  }

  /** Calls `reader` at the next write (one reader at a time). */
  onReadable(reader: () => void): void {
    this.reader = reader;
  }

  /** Stops waiting for a write. */
  stopReading(): void {
    this.reader = null;
  }

  /** Reads every byte written so far (the book reads 0x100 at a time); returns how many. */
  consume(): number {
    const n = this.bytes;
    this.bytes = 0;
    return n;
  }
}

/** One domain's sleepers and its `select`: the events backend of the `Chat` module. */
export class Sleepers implements L.Events {
  readonly queue = new Pqueue<Sleeper>((a, b) => a.time - b.time);
  readonly pipe = new Pipe();
  /** How many times `interrupt` was called (for the curious, and the tests). */
  interrupts = 0;

  constructor(readonly domain: number) {}

  /**
   * Signals the sleepers whose time has come, dropping cancelled ones on
   * the way (the book's `remove_and_signal_older`).
   */
  removeAndSignalOlder(): L.Signal[] {
    const signals: L.Signal[] = [];
    for (let min = this.queue.findMin(); min !== undefined; min = this.queue.findMin()) {
      if (min.cancelled) this.queue.deleteMin();
      else if (inThePast(min.time)) {
        this.queue.deleteMin();
        signals.push(L.signal(min.syscall));
      } else break;
    }
    return signals;
  }

  /** Marks the sleepers of cancelled suspension points (the book's `clean`). */
  clean(uids: readonly L.Uid[]): void {
    if (uids.length === 0) return;
    const cancelled = new Set(uids);
    this.queue.iter((sleeper) => {
      if (cancelled.has(L.uid(sleeper.syscall))) sleeper.cancelled = true;
    });
  }

  /** The soonest sleeper that was not cancelled (the book's `minimum`). */
  minimum(): Sleeper | undefined {
    for (let min = this.queue.findMin(); min !== undefined; min = this.queue.findMin()) {
      if (!min.cancelled) return min;
      this.queue.deleteMin();
    }
    return undefined;
  }

  /**
   * The book's `select`: forget the cancelled sleepers, wait until the next
   * sleeper's time or an interruption, then signal the sleepers due. With
   * `block = false` (tasks are still runnable) it never waits; with no
   * sleeper left it returns at once, as the book's (a timeout of 0).
   */
  select(block: boolean, cancelled: readonly L.Uid[]): L.Signal[] | Promise<L.Signal[]> {
    this.clean(cancelled);
    const min = this.minimum();
    const ts = min === undefined ? 0 : Math.max(0, min.time - now());
    if (!block || ts === 0 || this.pipe.readable) {
      this.pipe.consume();
      return this.removeAndSignalOlder();
    }
    return new Promise<L.Signal[]>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.pipe.stopReading();
        this.pipe.consume();
        resolve(this.removeAndSignalOlder());
      };
      const timer = setTimeout(wake, ts);
      this.pipe.onReadable(wake);
    });
  }

  /** The book's `interrupt`: a byte into the pipe. */
  interrupt(): void {
    this.interrupts++;
    this.pipe.write();
  }

  /** The domain stops: its sleepers are gone with it. */
  finaliser(): void {
    this.pipe.stopReading();
    if (domainSleepers === this) domainSleepers = null;
  }
}

/** This thread's domain's sleepers, while a `Chat` run is on: the book's `Domain.DLS` key. */
let domainSleepers: Sleepers | null = null;

/**
 * The `Chat` events factory, one backend per domain. Defined with
 * `defineEvents`, so that worker domains make theirs too.
 *
 * @throws TypeError when a `Chat` run is already on in this thread (each
 * thread holds one domain's sleepers).
 */
export const events = L.defineEvents(import.meta.url, "chat", (domain: number): Sleepers => {
  if (domainSleepers !== null) {
    throw new TypeError("Chat: one Chat run at a time per thread (the sleepers are the domain's, as in the book)");
  }
  domainSleepers = new Sleepers(domain);
  return domainSleepers;
});

/**
 * The sleepers of the current domain (for the curious, and the tests).
 * @throws TypeError outside a `Chat` run.
 */
export function sleepers(): Sleepers {
  if (domainSleepers === null) throw new TypeError("Chat.sleep must run in a task of Chat.run (or of B.run with { events: Chat.events })");
  return domainSleepers;
}

/**
 * The book's `Chat.sleep`: suspends the current task for `delay` seconds
 * while the other tasks run.
 *
 * @example
 * ```ts
 * yield* Chat.sleep(1.5);
 * ```
 * @throws TypeError outside a `Chat` run; RangeError for a negative or non-finite delay.
 * @throws Cancelled when the task is cancelled while asleep.
 */
export function* sleep(delay: number): Generator<B.Instruction, void, unknown> {
  if (!(delay >= 0) || !Number.isFinite(delay)) throw new RangeError(`Chat.sleep(delay): delay must be ≥ 0 seconds, got ${delay}`);
  const queue = sleepers().queue;
  const time = now() + delay * 1000;
  const syscall = L.syscall("Chat.sleep");
  queue.insert({ time, syscall, cancelled: false });
  yield* L.suspend(syscall);
}

/**
 * The book's `Chat.run`: `B.run` with the `Chat` events on every domain.
 *
 * @example
 * ```ts
 * await Chat.run(function* () { yield* Chat.sleep(1); });
 * ```
 * @throws (rejects with) what `B.run` rejects with.
 */
export function run<T>(main: B.TaskBody<[], T>, options: B.RunOptions = {}): Promise<T> {
  return L.runKernel(main, { ...options, events });
}
