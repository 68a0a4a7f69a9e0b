/**
 * UDP: a bound socket's mailbox of datagrams (at most 1,024 wait; later ones
 * are dropped, as a full kernel buffer would), and the datagrams between
 * hosts, which links may lose or reorder.
 */
import type { InetAddress } from "@bobbin/unix";
import type { Host } from "./host.js";
import type { Network } from "./network.js";
import { Packet } from "./packet.js";
import type { SimSocket } from "./socket.js";
import type { Waiting } from "./stream.js";

/** How many datagrams wait in a socket at most. */
const MAILBOX_SIZE = 1024;

/** @internal A received datagram. */
export interface Letter {
  readonly bytes: Uint8Array;
  readonly from: InetAddress;
}

/** @internal */
export class Mailbox {
  readonly letters: Letter[] = [];
  readonly receivers: Waiting[] = [];

  /** A datagram arrived for this socket. */
  post(letter: Letter): void {
    if (this.letters.length >= MAILBOX_SIZE) return;
    this.letters.push(letter);
    this.receivers.shift()?.ready();
  }

  /** Takes the oldest datagram, waking the next receiver if more wait. */
  take(): Letter | undefined {
    const letter = this.letters.shift();
    if (letter !== undefined && this.letters.length !== 0) this.receivers.shift()?.ready();
    return letter;
  }

  /** The socket closes: receivers are woken (they fail with `SocketClosed`). */
  close(): void {
    this.letters.length = 0;
    for (const r of this.receivers.splice(0)) r.ready();
  }
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
