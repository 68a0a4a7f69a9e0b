/**
 * How both raw-descriptor backends count the operations parked on I/O: the
 * backend's handle in Node's loop (the poller, the ring) is referenced while
 * at least one waits, and only then, so a run whose tasks wait on nothing
 * I/O can wake still ends in `Deadlock`.
 */
import type { Waiter } from "./sockets.js";

/** @internal What holds Node's loop (its `ref`/`unref` do nothing once the handle is destroyed). */
export interface LoopHandle {
  ref(): void;
  unref(): void;
}

/** @internal The operations of one backend parked on I/O, counted. */
export class Parking {
  private parked = 0;

  constructor(private readonly handle: LoopHandle) {}

  /** How many operations are parked. */
  get count(): number {
    return this.parked;
  }

  /** An operation parks at the end of `list`. */
  park(list: Waiter[], op: Waiter): void {
    list.push(op);
    if (this.parked++ === 0) this.handle.ref();
  }

  /** An operation parks at the head of `list` (a write in progress, ahead of queued ones). */
  parkFirst(list: Waiter[], op: Waiter): void {
    list.unshift(op);
    if (this.parked++ === 0) this.handle.ref();
  }

  /** A parked operation leaves `list` without being woken; whether it was there. */
  unpark(list: Waiter[], op: Waiter): boolean {
    const i = list.indexOf(op);
    if (i < 0) return false;
    list.splice(i, 1);
    this.left();
    return true;
  }

  /** Wakes an operation already taken off its list. */
  wake(op: Waiter): void {
    this.left();
    op.ready();
  }

  /** Wakes every operation of `list` (they retry and see why: closed, shut down). */
  wakeAll(list: Waiter[]): void {
    while (list.length !== 0) this.wake(list.shift()!);
  }

  private left(): void {
    if (--this.parked === 0) this.handle.unref();
  }
}

/**
 * @internal Settles once a handle destroyed just now (the poller, the ring)
 * is gone from Node's loop: libuv closes it in `uv_close`'s callback, in the
 * "close callbacks" phase, and after two check phases one of those has run.
 */
export function afterHandleClose(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/**
 * @internal What failed under a backend outside any operation: its poller
 * or ring, in a Node callback (a failed `epoll_wait` or `io_uring_enter`,
 * libuv unable to poll, shared memory detached). Nothing there can throw to
 * a task, so the error is kept, a pending `select` is interrupted, and the
 * next `select` throws it: core then fails the run with it (a
 * `CallbackFailed` naming the backend's select, this error its cause).
 */
export class BackendFailure {
  private error: Error | null = null;

  constructor(private readonly interrupt: () => void) {}

  /** Keeps the first failure and has the next `select` come soon. */
  fail(error: Error): void {
    this.error ??= error;
    this.interrupt();
  }

  /** Throws the failure, if any (from `select`). */
  check(): void {
    if (this.error !== null) throw this.error;
  }
}
