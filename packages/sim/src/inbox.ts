/**
 * An inbox: what arrives for a socket and waits to be taken — a listener's
 * established connections, a UDP socket's datagrams — and the tasks
 * waiting to take it. At most `capacity` items wait; more are refused (a
 * full accept queue, a full receive buffer).
 */
import { WaitQueue } from "@bobbin/unix/backend";

/** @internal */
export class Inbox<T> {
  readonly items: T[] = [];
  readonly waiters = new WaitQueue();

  constructor(private readonly capacity: number) {}

  /** Whether another item would be refused. */
  get full(): boolean {
    return this.items.length >= this.capacity;
  }

  /** Adds an item (unless full: returns false) and wakes the first waiter. */
  post(item: T): boolean {
    if (this.full) return false;
    this.items.push(item);
    this.waiters.wakeFirst();
    return true;
  }

  /** Takes the oldest item, waking the next waiter if more wait. */
  take(): T | undefined {
    const item = this.items.shift();
    if (item !== undefined && this.items.length !== 0) this.waiters.wakeFirst();
    return item;
  }

  /** The socket closes: when `wake`, every waiter is woken (they fail with `SocketClosed`); returns what was left. */
  close(wake: boolean): T[] {
    if (wake) this.waiters.wakeAll();
    return this.items.splice(0);
  }
}
