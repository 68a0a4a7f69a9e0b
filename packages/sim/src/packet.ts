/**
 * A packet on its way from one host to another: an event of the world's
 * agenda, delivered when it fires — unless its destination host is down
 * then, in which case it is gone.
 */
import type { Event } from "./clock.js";
import type { Host } from "./host.js";
import type { Flow } from "./link.js";
import type { TraceRecorder } from "./trace.js";

/** @internal What carries packets: the world's network. */
export interface Carrier {
  /** Sends a packet from its host to its destination. */
  send(packet: Packet): void;
  readonly trace: TraceRecorder | null;
}

/** @internal */
export abstract class Packet implements Event {
  at = 0;
  heapIndex = -1;
  /** Whether it must get through (TCP): a partition holds it instead of losing it. */
  abstract readonly reliable: boolean;
  /** Whether a partition loses it although it is TCP (a SYN: the client sends it again). */
  readonly droppable: boolean = false;

  constructor(
    readonly network: Carrier,
    readonly from: Host,
    readonly to: Host,
    /** The flow it belongs to (one direction of a connection), whose packets arrive in order. */
    readonly flow: Flow | null,
  ) {}

  /** Hands the packet to the network. */
  send(): void {
    this.network.send(this);
  }

  fire(): void {
    if (!this.to.up) {
      this.network.trace?.packet(this.to.name, "drop", this, " (host down)");
      return;
    }
    this.network.trace?.packet(this.to.name, "recv", this);
    this.deliver();
  }

  /** The packet arrived at a running host. */
  protected abstract deliver(): void;

  /** Says what the packet is, for the trace. */
  abstract describe(): string;
}
