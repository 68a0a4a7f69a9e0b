/**
 * Host names for the raw-socket backends: an operation resolves its host
 * once, in a Node callback (`dns.lookup` in the socket's family), and parks
 * while the lookup runs; errors carry the address they were about.
 */
import * as dns from "node:dns";
import * as net from "node:net";
import type { Address } from "@bobbin/unix";

/** @internal One operation's host lookup. */
export class HostLookup {
  /** The numeric address, once `resolved` said true. */
  ip = "";
  private state: 0 | 1 | 2 = 0; // not started, running, done
  private error: Error | null = null;
  private parked = false;

  /** `ready` is the operation's own (Parked's): called when the lookup ends while it is parked on it. */
  constructor(private readonly ready: () => void) {}

  /**
   * True once `ip` is a numeric address for `host`, false while the lookup
   * runs (numeric hosts resolve at once). `family` is 4 or 6.
   * @throws the lookup's error (ENOTFOUND…).
   */
  resolved(host: string, family: number): boolean {
    if (this.state === 2) {
      if (this.error !== null) throw this.error;
      return true;
    }
    if (this.state === 1) return false;
    if (net.isIP(host) !== 0) {
      this.ip = host;
      this.state = 2;
      return true;
    }
    this.state = 1;
    dns.lookup(host, { family }, (error, ip) => {
      this.state = 2;
      if (error) this.error = error;
      else this.ip = ip;
      if (this.parked) {
        this.parked = false;
        this.ready();
      }
    });
    return false;
  }

  /** The operation waits for the lookup, if it runs (the pending request keeps Node alive); whether it does. */
  wait(): boolean {
    if (this.state !== 1) return false;
    this.parked = true;
    return true;
  }

  /** The operation left (its task was cancelled): it waits no more; whether it did. */
  leave(): boolean {
    if (!this.parked) return false;
    this.parked = false;
    return true;
  }
}

/** @internal Adds the address an error was about (`address`, `port`), as Node does. */
export function withAddress(error: NodeJS.ErrnoException, addr: Address): NodeJS.ErrnoException {
  const e = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if ("path" in addr) e.address = addr.path;
  else {
    e.address = addr.host;
    e.port = addr.port;
  }
  return e;
}
