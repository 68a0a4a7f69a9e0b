/**
 * UDP: the datagrams between hosts, which links may lose or reorder, and
 * what a bound socket keeps of them (at most 1,024 wait in its inbox; later
 * ones are dropped, as a full kernel buffer would).
 */
import type { InetAddress } from "@bobbin/unix";
import type { Host } from "./host.js";
import type { Network } from "./network.js";
import { Packet } from "./packet.js";
import type { SimSocket } from "./socket.js";

/** @internal How many datagrams wait in a socket at most. */
export const MAILBOX_SIZE = 1024;

/** @internal A received datagram. */
export interface Letter {
  readonly bytes: Uint8Array;
  readonly from: InetAddress;
}

/** @internal A datagram on its way to `ip:port` on `to`. */
export class Datagram extends Packet {
  readonly reliable = false;

  constructor(
    network: Network,
    readonly sender: SimSocket,
    readonly fromIp: string,
    to: Host,
    readonly ip: string,
    readonly port: number,
    readonly bytes: Uint8Array,
  ) {
    super(network, sender.host, to, null);
  }

  protected deliver(): void {
    const sock = this.to.ports.find("udp", this.sender.family, this.ip, this.port);
    sock?.mailbox?.post({ bytes: this.bytes, from: { host: this.fromIp, port: this.sender.port } });
  }

  describe(): string {
    return `udp ${this.fromIp}:${this.sender.port} > ${this.ip}:${this.port} ${this.bytes.length}`;
  }
}
