/**
 * A UDP socket of the libuv backend: a `dgram.Socket`, the datagrams it
 * received and no task took yet (at most {@link MAX_DATAGRAMS}; later ones
 * are dropped, as a full kernel buffer would), and the tasks in `recvfrom`
 * and `sendto`.
 */
import * as dgram from "node:dgram";
import { afterHandleClose, type NodeSocket } from "../backend/node-socket.js";
import { WaitQueue } from "../backend/wait-queue.js";
import type { Address } from "../contract.js";

/** Datagrams kept for `recvfrom`; later ones are dropped, as a full kernel buffer would. */
export const MAX_DATAGRAMS = 1024;

/** A datagram received and not yet taken. */
export interface Datagram {
  readonly msg: Buffer;
  readonly from: Address;
}

/** @internal A UDP socket's Node socket. */
export class UvDatagram {
  readonly udp: dgram.Socket;
  readonly datagrams: Datagram[] = [];
  readonly receivers = new WaitQueue();
  /** `sendto`s waiting for Node's send callback (closing the socket wakes them: Node may never call back). */
  readonly senders = new WaitQueue();
  /** A receive error, for the next `recvfrom`. */
  error: Error | null = null;

  constructor(
    private readonly sock: NodeSocket,
    reuseAddr: boolean,
    /** The bind failed: this Node socket is gone (a later bind makes another). */
    private readonly bindFailed: (error: Error) => void,
  ) {
    const udp = dgram.createSocket({ type: sock.kind === "udp6" ? "udp6" : "udp4", reuseAddr });
    this.udp = udp;
    sock.hold();
    udp.on("message", (msg: Buffer, rinfo: dgram.RemoteInfo) => {
      if (this.datagrams.length >= MAX_DATAGRAMS) return;
      this.datagrams.push({ msg, from: { host: rinfo.address, port: rinfo.port } });
      this.receivers.wakeFirst();
    });
    udp.on("listening", () => {
      if (sock.state === "closed") return;
      sock.state = "bound";
      sock.opened();
    });
    udp.on("error", (error: Error) => {
      if (sock.state === "closed") return;
      if (sock.opener !== null && sock.state === "fresh") {
        // bind failed: drop this handle, and report once it is gone.
        this.bindFailed(error);
        this.#close(() => sock.openFailed(error));
        return;
      }
      this.error = error;
      this.receivers.wakeFirst();
    });
  }

  /** "127.0.0.1:5353" (a dump). */
  describe(): string {
    try {
      const a = this.udp.address();
      return `${a.address}:${a.port}`;
    } catch {
      return "(unbound)"; // not bound yet
    }
  }

  /** The address it is bound to. @throws TypeError before it is bound. */
  address(): Address {
    try {
      const a = this.udp.address();
      return { host: a.address, port: a.port };
    } catch {
      throw new TypeError(`localAddress(): the ${this.sock.kind} socket is not bound yet`);
    }
  }

  /**
   * The oldest datagram, or undefined (wakes the next receiver if more wait).
   * @throws the receive error, once.
   */
  take(): Datagram | undefined {
    const d = this.datagrams.shift();
    if (d !== undefined) {
      if (this.datagrams.length !== 0) this.receivers.wakeFirst();
      return d;
    }
    const error = this.error;
    if (error !== null) {
      this.error = null;
      throw error;
    }
    return undefined;
  }

  /** The socket closes: receivers and senders fail, the Node socket goes. */
  closeNow(): void {
    this.datagrams.length = 0;
    this.#close();
    this.receivers.wakeAll();
    this.senders.wakeAll();
  }

  /** Closes the Node socket; once it is gone, releases the socket's hold on it and runs `then`. */
  #close(then?: () => void): void {
    try {
      this.udp.close();
    } catch {
      // already closed by an error
    }
    afterHandleClose(() => {
      this.sock.release();
      then?.();
    });
  }
}
