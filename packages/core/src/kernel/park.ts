/**
 * Parking a task on itself (`L.park`, `L.unpark`): a one-shot wake-up with no
 * record of its own, for programs that keep a great many tasks waiting. The
 * task is its own handle; a wake-up that comes before the task parks is a bit
 * of its flags (its permit, state.ts); what a parked task waits on is its
 * kernel's one `Parking`, which also leads `unpark` to that kernel. A fiber
 * parked so costs its task record and its generator, nothing more.
 */
import { RESUMED } from "../operation.js";
import type { Host } from "./host.js";
import { toPermitTaken, toPermitted, waiterOf } from "./state.js";
import type { Task, Waiter } from "./task.js";

/** @internal What the tasks of one kernel parked by `L.park` wait on. */
export class Parking implements Waiter {
  constructor(private readonly kernel: Host) {}

  /** Parks the running `task`; returns false, parking nothing, when it takes the permit an earlier `unpark` left. */
  park(task: Task): boolean {
    if (toPermitTaken(task)) return false;
    this.kernel.park(task, this);
    return true;
  }

  /** A parked task leaves (cancelled or interrupted): nothing was registered anywhere, so nothing is undone. */
  detach(): void {
    return;
  }

  describe(): string {
    return "L.park (until L.unpark wakes it)";
  }

  /** Wakes `task` if it is parked by `L.park`; otherwise leaves it a permit. Returns whether it woke it. */
  static unpark(task: Task): boolean {
    const waiter = waiterOf(task);
    if (waiter instanceof Parking) {
      waiter.kernel.wake(task, RESUMED);
      return true;
    }
    toPermitted(task);
    return false;
  }
}
