/**
 * `NodeLoop`: the events half of a backend driven by Node's own event loop
 * (the libuv backend, and any backend whose readiness arrives as Node
 * callbacks, such as a `uv_poll_t` over an epoll set).
 *
 * Node callbacks report ready suspension points with `signal(s)`; `select`
 * hands them to the scheduler. With nothing ready and `block = true`,
 * `select` returns a Promise that settles at the end of the current phase of
 * Node's loop once a callback made something ready (all the readiness of one
 * libuv poll is handed over in one batch), or at once on `interrupt()`.
 * Deadlines live in one heap with a single Node timer.
 */
import type * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import type { DeadlineHandle } from "../contract.js";
import type { FlushMode } from "./flush-mode.js";
import { Parked } from "./parked.js";
import { type Deadline, Timers } from "./timers.js";

const NONE: L.Signal[] = [];

class CallbackDeadline implements Deadline, DeadlineHandle {
  heapIndex = -1;
  constructor(
    readonly at: number,
    private readonly callback: (() => void) | null,
    private readonly timers: Timers,
  ) {}

  fire(): void {
    this.callback?.();
  }

  cancel(): void {
    this.timers.remove(this);
  }
}

/**
 * Core's `Events` for a backend fed by Node callbacks. Extend it (or hold
 * one) and call {@link NodeLoop.signal} from your callbacks.
 *
 * @example
 * ```ts
 * class MyBackend extends NodeLoop implements Backend {
 *   // in a Node callback, when an operation parked on syscall `s` can go on:
 *   onReadable(s: L.Syscall) { this.signal(s); }
 * }
 * ```
 * @throws never: its methods do not throw (a pending `select` is settled, never rejected).
 */
export class NodeLoop implements L.Events {
  /** The deadlines of this backend (sleepers, timeouts). */
  readonly timers = new Timers();
  /** Core's `batchWakes`: in `"immediate"` mode, the tasks a phase of Node's loop woke run in one slice. */
  readonly batchWakes: boolean;
  #ready: L.Signal[] = [];
  #resolve: ((signals: L.Signal[]) => void) | null = null;
  #flushScheduled = false;
  readonly #flushMode: FlushMode;
  readonly #capture = (resolve: (signals: L.Signal[]) => void): void => {
    this.#resolve = resolve;
  };
  readonly #flushFn = (): void => this.#flush();

  /**
   * @param flushMode when a blocked `select` hears of ready points:
   * `"immediate"` (default) hands over everything Node's current loop phase
   * made ready in one batch, in the check phase; `"microtask"` hands each
   * callback's readiness over at once.
   */
  constructor(flushMode: FlushMode = "immediate") {
    this.#flushMode = flushMode;
    this.batchWakes = flushMode === "immediate";
  }

  /**
   * Reports a suspension point ready: its task resumes at the next `select`.
   * Call it from Node callbacks (or synchronously from an operation).
   */
  signal(s: L.Syscall): void {
    this.#ready.push(L.signal(s));
    if (this.#resolve !== null && !this.#flushScheduled) {
      this.#flushScheduled = true;
      if (this.#flushMode === "immediate") setImmediate(this.#flushFn);
      else queueMicrotask(this.#flushFn);
    }
  }

  /** How many ready points wait for the next `select`. */
  protected get readyCount(): number {
    return this.#ready.length;
  }

  /** The clock of deadlines: `performance.now()`. */
  now(): number {
    return performance.now();
  }

  /** Core's `select`: the points made ready since the last call, or a Promise of them. */
  select(block: boolean, cancelled: readonly L.Uid[]): L.Signal[] | Promise<L.Signal[]> {
    if (cancelled.length !== 0) this.forget(cancelled);
    if (this.#ready.length !== 0) {
      const ready = this.#ready;
      this.#ready = [];
      return ready;
    }
    if (!block) return NONE;
    return new Promise(this.#capture);
  }

  /** Core's `interrupt`: settles a pending `select` now. */
  interrupt(): void {
    if (this.#resolve !== null) this.#flush();
  }

  /** Core's `finaliser`: the run is over. Forgets every deadline and settles a pending `select`. */
  finaliser(): void {
    this.timers.clear();
    this.#flush();
  }

  /**
   * `Backend.sleep`: parks the calling task for `ms` (≥ 0; `Infinity` is
   * forever) in the timer heap. `0` only lets every ready task run first.
   */
  sleep(ms: number): B.Operation<void> {
    return new SleepOp(this, ms);
  }

  /**
   * Registers `fire` to run at `at` (`performance.now()` ms) in the timer
   * heap (`Backend.deadline`).
   */
  deadline(at: number, fire: () => void): DeadlineHandle {
    const d = new CallbackDeadline(at, fire, this.timers);
    this.timers.add(d);
    return d;
  }

  /**
   * Suspension points whose tasks were cancelled. Operations built on
   * `Parked` clean up when the cancellation is thrown into them, so the
   * default does nothing; override it to drop registrations by uid.
   */
  protected forget(cancelled: readonly L.Uid[]): void {
    void cancelled;
  }

  #flush(): void {
    this.#flushScheduled = false;
    const resolve = this.#resolve;
    if (resolve === null) return;
    this.#resolve = null;
    const ready = this.#ready;
    this.#ready = [];
    resolve(ready);
  }
}

/** `sleep`: an entry of the loop's deadline heap. */
class SleepOp extends Parked<void> implements Deadline {
  heapIndex = -1;
  at = 0;
  private expired = false;

  private readonly timers: Timers;

  constructor(
    loop: NodeLoop,
    private readonly ms: number,
  ) {
    super("sleep");
    this.timers = loop.timers;
  }

  protected attempt(): boolean {
    return this.expired;
  }

  protected wait(): void {
    if (this.ms <= 0) {
      // sleep(0) still lets every other ready task run first: it wakes after this slice of the run loop.
      queueMicrotask(() => this.fire());
      return;
    }
    this.at = this.ms === Infinity ? Infinity : performance.now() + this.ms;
    this.timers.add(this);
  }

  protected leave(): void {
    this.timers.remove(this);
  }

  /** "sleep, 2.4 s left" (a dump). */
  override describe(): string {
    if (this.at === Infinity) return "sleep forever";
    const left = Math.max(0, this.at - performance.now()) / 1000;
    return `sleep, ${left < 10 ? left.toFixed(1) : Math.round(left)} s left`;
  }

  fire(): void {
    this.expired = true;
    this.ready();
  }
}
