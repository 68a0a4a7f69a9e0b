// The README's minimal backend: no sockets, and a clock that jumps to the
// next deadline whenever every task waits, so sleeping costs no real time
// (handy for testing timeouts). It shows the three pieces a backend is made
// of: the events half (NodeLoop), parked operations (Parked) and deadlines.
import type * as B from "@bobbin/core";
import type * as L from "@bobbin/core/lowlevel";
import { type Deadline, type DeadlineHandle, DeadlineHeap, NodeLoop, Parked, systemError } from "../../src/backend/index.js";
import type { Backend } from "../../src/index.js";

class VirtualSleep extends Parked<void> implements Deadline {
  heapIndex = -1;
  at = 0;
  private done = false;

  constructor(
    private readonly clock: VirtualTime,
    private readonly ms: number,
  ) {
    super("virtual sleep");
  }

  protected attempt(): boolean {
    return this.done; // false the first time: park
  }

  protected wait(): void {
    this.at = this.clock.now() + this.ms;
    this.clock.heap.push(this); // fire() below runs when the clock gets there
  }

  protected leave(): void {
    this.clock.heap.remove(this); // cancelled or timed out: forget it
  }

  fire(): void {
    this.done = true;
    this.ready(); // the task resumes and attempts again
  }
}

const unsupported = (): never => {
  throw systemError("ENOTSUP", "socket", "the virtual-time backend has no sockets");
};

export class VirtualTime extends NodeLoop implements Backend {
  readonly name = "virtual-time";
  // Sleeps wake their tasks directly, but select must run while any is due: it moves the clock.
  pending(): boolean {
    return this.heap.size !== 0;
  }
  readonly heap = new DeadlineHeap();
  private clock = 0;

  override now(): number {
    return this.clock;
  }

  override sleep(ms: number): B.Operation<void> {
    return new VirtualSleep(this, ms);
  }

  override deadline(at: number, fire: () => void): DeadlineHandle {
    const d: Deadline = { at, heapIndex: -1, fire };
    this.heap.push(d);
    return { cancel: () => void this.heap.remove(d) };
  }

  // Every task waits: jump to the next deadline, fire what is due (sleeps and
  // withTimeout's deadlines wake their tasks), and return without blocking.
  override select(block: boolean, cancelled: readonly L.Uid[]): L.Signal[] | Promise<L.Signal[]> {
    const next = this.heap.peek();
    if (block && next !== undefined && next.at !== Infinity) {
      this.clock = Math.max(this.clock, next.at);
      for (let d = this.heap.peek(); d !== undefined && d.at <= this.clock; d = this.heap.peek()) this.heap.pop()!.fire();
      return super.select(false, cancelled);
    }
    return super.select(block, cancelled);
  }

  drain(): Promise<void> {
    this.heap.clear();
    return Promise.resolve();
  }

  socket = unsupported;
  bindAndListen = unsupported;
  accept = unsupported;
  connect = unsupported;
  read = unsupported;
  write = unsupported;
  recvfrom = unsupported;
  sendto = unsupported;
  shutdown = unsupported;
  close = unsupported;
  closeNow = unsupported;
  localAddress = unsupported;
}
