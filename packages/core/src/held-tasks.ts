/**
 * The tasks an orphans collector holds: in the order they came, found by
 * their uid. A collector of a server can hold a task per connection for
 * the connection's life, so this costs a word per task where a set would
 * cost an entry in a table as large as the most tasks ever held at once.
 */
import { broken } from "./kernel/assert.js";

/**
 * @internal Tasks in the order they were added, which must be the order of
 * their uids (a collector's tasks are its owner's children, adopted as they
 * are spawned): `has` and `delete` search by uid. A task deleted leaves its
 * uid in its slot until the slots are compacted, once more than half are
 * such.
 */
export class HeldTasks<T extends { readonly uid: number }> {
  private slots: (T | number)[] = [];
  /** The slots before it hold no task. */
  private start = 0;
  private count = 0;

  /** How many tasks it holds. */
  get size(): number {
    return this.count;
  }

  /** Adds `task`, whose uid is above every uid added before (else the kernel is broken: searches would miss). */
  add(task: T): void {
    const slots = this.slots;
    if (__BOBBIN_DEV__ && slots.length !== 0 && uidAt(slots[slots.length - 1]!) >= task.uid)
      broken(task, "is held after a task with a higher uid");
    slots.push(task);
    this.count++;
  }

  has(task: T): boolean {
    return this.indexOf(task) >= 0;
  }

  /** The task added first of those it holds. */
  first(): T | undefined {
    const slots = this.slots;
    let i = this.start;
    while (i < slots.length && typeof slots[i] === "number") i++;
    this.start = i;
    return slots[i] as T | undefined;
  }

  /** Removes `task`; returns whether it held it. */
  delete(task: T): boolean {
    const i = this.indexOf(task);
    if (i < 0) return false;
    this.slots[i] = task.uid;
    const count = --this.count;
    if (count === 0) {
      this.slots = [];
      this.start = 0;
    } else if (this.slots.length - count > Math.max(count, 16)) {
      this.slots = this.slots.filter((slot) => typeof slot !== "number");
      this.start = 0;
    }
    return true;
  }

  /** Where `task` is, or -1. */
  private indexOf(task: T): number {
    const slots = this.slots;
    const uid = task.uid;
    let lo = this.start;
    let hi = slots.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const slot = slots[mid]!;
      const at = uidAt(slot);
      if (at < uid) lo = mid + 1;
      else if (at > uid) hi = mid - 1;
      else return slot === task ? mid : -1;
    }
    return -1;
  }
}

/** The uid of a slot's task (or of the task that left it). */
function uidAt(slot: { readonly uid: number } | number): number {
  return typeof slot === "number" ? slot : slot.uid;
}
