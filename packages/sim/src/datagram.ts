/**
 * UDP: the datagrams between hosts, which links may lose or reorder, and
 * what a bound socket keeps of them (at most 1,024 wait in its inbox; later
 * ones are dropped, as a full kernel buffer would).
 */
import type { InetAddress } from "@bobbin/unix";
import type { Family } from "./address.js";
import type { Host } from "./host.js";
import type { Inbox } from "./inbox.js";
import type { Network } from "./network.js";
import { Packet } from "./packet.js";

/** @internal How many datagrams wait in a socket at most. */
export const MAILBOX_SIZE = 1024;

/** @internal A received datagram. */
export interface Letter {
  readonly bytes: Uint8Array;
  readonly from: InetAddress;
}

/** @internal What a datagram needs of the socket that sends it. */
export interface Sender {
  readonly host: Host;
  readonly family: Family;
  readonly port: number;
}

/** @internal Where a datagram finds the socket bound at its destination (the backend's sockets, by host). */
export interface PostOffice {
  /** The inbox of the UDP socket bound at `ip:port` on `host`, or null. */
  mailboxAt(host: Host, family: Family, ip: string, port: number): Inbox<Letter> | null;
}

/** @internal A datagram on its way to `ip:port` on `to`. */
export class Datagram extends Packet {
  readonly reliable = false;

  constructor(
    network: Network,
    private readonly post: PostOffice,
    readonly sender: Sender,
    readonly fromIp: string,
    to: Host,
    readonly ip: string,
    readonly port: number,
    readonly bytes: Uint8Array,
  ) {
    super(network, sender.host, to, null);
  }

  protected deliver(): void {
    this.post
      .mailboxAt(this.to, this.sender.family, this.ip, this.port)
      ?.post({ bytes: this.bytes, from: { host: this.fromIp, port: this.sender.port } });
  }

  describe(): string {
    return `udp ${this.fromIp}:${this.sender.port} > ${this.ip}:${this.port} ${this.bytes.length}`;
  }
}
