/**
 * Name lookups: an IP address resolves at once; a host name (or
 * `localhost`) resolves asynchronously, as `getaddrinfo` answers through
 * Node's loop — at the same virtual instant, once every task of the world
 * waits. So an operation given a name waits for its lookup, and can be
 * cancelled (or its socket closed) meanwhile.
 */

import type { Parked } from "@bobbin/unix/backend";
import type { Family } from "./address.js";
import { isLiteral } from "./address.js";
import type { Host } from "./host.js";
import type { Destination } from "./network.js";
import type { World } from "./world.js";

/** @internal */
export class Lookup {
  private result: Destination | null = null;
  private error: unknown = null;
  private waiter: Parked<unknown> | null = null;

  constructor(
    private readonly world: World,
    private readonly from: Host,
    private readonly name: string,
    private readonly family: Family,
    private readonly syscall: string,
  ) {
    if (isLiteral(name)) this.resolve();
  }

  /** Whether the lookup is over (resolved or failed). */
  get done(): boolean {
    return this.result !== null || this.error !== null;
  }

  /** The destination; throws the lookup's error (ENOTFOUND…). */
  take(): Destination {
    if (this.error !== null) throw this.error;
    return this.result!;
  }

  /** Waits for the answer: `waiter.ready()` once every task of the world waits. */
  await(waiter: Parked<unknown>): void {
    this.waiter = waiter;
    this.world.defer(this);
  }

  /** The waiter left (cancelled, timed out): no answer is wanted any more. */
  cancel(): void {
    this.waiter = null;
    this.world.undefer(this);
  }

  /** The world has nothing else to do: the answer comes. */
  answer(): void {
    this.resolve();
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.ready();
  }

  private resolve(): void {
    try {
      this.result = this.world.network.resolve(this.from, this.name, this.family, this.syscall);
    } catch (error) {
      this.error = error;
    }
  }
}
