/**
 * The simulated network: the hosts and their addresses, the links between
 * them, and the way a packet goes from one host to another — over the
 * loopback at once, over a link after its latency, held or lost when the
 * link is faulty. Every choice is drawn from the world's generator.
 */
import { systemError } from "@bobbin/unix/backend";
import { type Family, isLiteral, isLoopback, isWildcard, loopbackOf } from "./address.js";
import type { Clock } from "./clock.js";
import type { Host } from "./host.js";
import { DEFAULT_LINK, type Draws, Link, type LinkOptions } from "./link.js";
import type { Packet } from "./packet.js";
import type { TraceRecorder } from "./trace.js";

/** @internal Where a packet goes: a host and the address it was sent to there. */
export interface Destination {
  readonly host: Host;
  readonly ip: string;
}

/** @internal What the network tells the world: faults (for the shrinker) and the hosts a step reaches (for `explore`). */
export interface NetworkEvents {
  fault(): void;
  touch(host: Host | null): void;
}

/** @internal The draws the network makes: latencies, and whether a datagram is lost or late. */
export interface NetworkDraws extends Draws {
  chance(p: number): boolean;
}

/** @internal */
export class Network {
  readonly hosts: Host[] = [];
  private readonly byName = new Map<string, Host>();
  private readonly byIp = new Map<string, Host>();
  /** The links made so far, by their hosts' indexes: `[from][to]` (looked up for every packet). */
  private readonly links: Link<Packet>[][] = [];
  private defaults: Required<LinkOptions> = DEFAULT_LINK;

  constructor(
    /** The world's clock: packets in flight are events of its agenda. */
    readonly clock: Clock,
    private readonly random: NetworkDraws,
    /** The trace, when the simulation keeps one. */
    readonly trace: TraceRecorder | null,
    readonly events: NetworkEvents,
  ) {}

  /** Adds a host (its name and addresses must be new). */
  add(host: Host): void {
    this.hosts.push(host);
    this.byName.set(host.name, host);
    this.byIp.set(host.ipv4, host);
    this.byIp.set(host.ipv6, host);
  }

  /** The host named `name`, if any. */
  host(name: string): Host | undefined {
    return this.byName.get(name);
  }

  /** Sets the options of every link (those set by `configure` keep theirs where they set them). */
  configureAll(options: LinkOptions): void {
    this.defaults = { ...this.defaults, ...options };
    for (const row of this.links) if (row !== undefined) for (const link of row) link?.configure(options);
  }

  /** The link from `from` to `to`. */
  link(from: Host, to: Host): Link<Packet> {
    const row = (this.links[from.index] ??= []);
    return (row[to.index] ??= new Link<Packet>(this.defaults));
  }

  /**
   * Where `name` (a host name, `localhost`, or an address) leads from `from`, in `family`.
   * @throws ENOTFOUND for an unknown name; EHOSTUNREACH for an address no host has.
   */
  resolve(from: Host, name: string, family: Family, syscall: string): Destination {
    if (isLiteral(name)) {
      if (isLoopback(name)) return { host: from, ip: name };
      if (isWildcard(name)) return { host: from, ip: loopbackOf(family) };
      const host = this.byIp.get(name);
      if (host === undefined) throw systemError("EHOSTUNREACH", syscall, `no simulated host has the address ${name}`);
      return { host, ip: name };
    }
    if (name === "localhost") return { host: from, ip: loopbackOf(family) };
    const host = this.byName.get(name);
    if (host === undefined) {
      const error = systemError("ENOTFOUND", syscall, `no simulated host is named ${JSON.stringify(name)}`);
      error.message = `getaddrinfo ENOTFOUND ${name} (no simulated host has that name)`;
      throw error;
    }
    return { host, ip: host.address(family) };
  }

  /**
   * The address `host` may bind for `name`: the wildcard, a loopback
   * address, its own address (or name, or `localhost`).
   * @throws EADDRNOTAVAIL for an address of another host.
   */
  bindable(host: Host, name: string, family: Family, syscall: string): string {
    if (isLiteral(name)) {
      if (isWildcard(name) || isLoopback(name) || name === host.address(family)) return name;
    } else if (name === "localhost") {
      return loopbackOf(family);
    } else if (name === host.name) {
      return host.address(family);
    }
    throw systemError("EADDRNOTAVAIL", syscall, `${name} is not an address of the simulated host ${host.name}`);
  }

  /** The address a packet from `from` to `to` leaves from. */
  source(from: Host, to: Destination, family: Family): string {
    return to.host === from && isLoopback(to.ip) ? to.ip : from.address(family);
  }

  /**
   * Sends `packet` from its host to its destination: on the same host it arrives at once
   * (after the packets of its flow); over a link it arrives after the
   * link's latency — or waits for a release (held link), or for a repair
   * (partitioned link, TCP), or is lost (partitioned link: UDP and SYNs;
   * the link's loss rate: UDP).
   */
  send(packet: Packet): void {
    this.trace?.packet(packet.from.name, "send", packet);
    this.events.touch(packet.to);
    this.transmit(packet);
  }

  private transmit(packet: Packet): void {
    const { from, to } = packet;
    if (from === to) {
      this.schedule(packet, this.clock.now);
      return;
    }
    const link = this.link(from, to);
    if (link.held || (link.partitioned && packet.reliable && !packet.droppable)) {
      link.waiting.push(packet);
      this.trace?.packet(from.name, "hold", packet);
      return;
    }
    if (link.partitioned) {
      this.trace?.packet(from.name, "lose", packet);
      return;
    }
    if (!packet.reliable && this.random.chance(link.loss)) {
      this.trace?.packet(from.name, "lose", packet);
      this.events.fault();
      return;
    }
    let delay = link.delay(this.random);
    if (!packet.reliable && this.random.chance(link.reorder)) {
      delay += link.delay(this.random);
      this.events.fault();
    }
    this.schedule(packet, this.clock.now + delay);
  }

  /** Cuts both directions between `a` and `b`. */
  partition(a: Host, b: Host): void {
    this.both(a, b, (link) => (link.partitioned = true));
  }

  /** Heals a partition: TCP packets that waited go on. */
  repair(a: Host, b: Host): void {
    this.both(a, b, (link) => {
      link.partitioned = false;
      this.flush(link);
    });
  }

  /** Holds every packet between `a` and `b` until `release`. */
  hold(a: Host, b: Host): void {
    this.both(a, b, (link) => (link.held = true));
  }

  /** Lets held packets go on, in the order they were sent. */
  release(a: Host, b: Host): void {
    this.both(a, b, (link) => {
      link.held = false;
      this.flush(link);
    });
  }

  /** Applies `change` to both directions between `a` and `b`. */
  private both(a: Host, b: Host, change: (link: Link<Packet>) => void): void {
    change(this.link(a, b));
    change(this.link(b, a));
  }

  private flush(link: Link<Packet>): void {
    if (link.blocked) return;
    const waiting = link.waiting.splice(0);
    for (const packet of waiting) this.transmit(packet);
  }

  private schedule(packet: Packet, at: number): void {
    const flow = packet.flow;
    if (flow !== null) {
      if (at < flow.lastArrival) at = flow.lastArrival;
      flow.lastArrival = at;
    }
    this.clock.schedule(packet, at);
  }
}
