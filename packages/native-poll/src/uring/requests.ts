/**
 * The uring backend's requests: what it asks of the ring for each socket,
 * and under which user data. Per socket and direction there is at most one
 * request in flight (one recv, one accept, one send, one poll each way), so
 * their user data — the fd, and a tag: the fd's generation and the kind of
 * request — names each of them, and a socket's fd is closed only once its
 * last request completed: completions never meet a reused fd number. The
 * completions themselves are `completions.ts`'s; the ring's memory is
 * `ring.ts`'s.
 */
import type { Address, InetAddress } from "@bobbin/unix";
import { type Parked, type ParkedCount, WaitQueue } from "@bobbin/unix/backend";
import type { NativeAddressOut, NativeSyscalls } from "../load.js";
import { FdTable } from "../raw/fd-table.js";
import type { RawIo } from "../raw/io.js";
import type { Ring } from "./ring.js";
import type { UringSocket } from "./socket.js";

// The kind of a request, in the low bits of its tag; the fd's generation above.
/** @internal */ export const RECV = 1;
/** @internal */ export const ACCEPT = 2;
/** @internal */ export const SEND = 3;
/** @internal */ export const POLL_IN = 4;
/** @internal */ export const POLL_OUT = 5;
/** @internal */ export const CANCEL = 6;
/** @internal */ export const KIND_BITS = 4;
const GENERATIONS = 1 << 27;

/** @internal A write waiting for a staging slot. */
export interface SlotWaiter extends Parked<unknown> {
  readonly sock: UringSocket;
}

/** @internal */
export class UringIo implements RawIo<UringSocket> {
  /** Sockets by fd, and those with an open fd. */
  readonly fds = new FdTable<UringSocket>();
  /** Writes waiting for a staging slot. */
  readonly slotWaiters: WaitQueue<SlotWaiter>;
  /** The ring's handle is gone (the backend drained). */
  destroyed = false;
  /** Recvs ended for want of buffers, armed again as buffers come back. */
  readonly #starved: UringSocket[] = [];
  #generation = 0;
  /** One view per provided buffer, by buffer id: the chunks of the streams' received bytes. */
  readonly #views: Uint8Array[] = [];

  constructor(
    readonly ring: Ring,
    readonly sys: NativeSyscalls,
    readonly solSocket: number,
    readonly soReuseAddr: number,
    /** Operations parked on completions: while there are some, the ring keeps Node alive. */
    readonly parked: ParkedCount,
    /** Received bytes a connection may hold before its recv is paused. */
    readonly readAhead: number,
  ) {
    this.slotWaiters = new WaitQueue<SlotWaiter>(parked);
    for (let bid = 0, size = ring.bufferSize; (bid + 1) * size <= ring.buffers.length; bid++) {
      this.#views.push(ring.buffers.subarray(bid * size, (bid + 1) * size));
    }
  }

  /** The socket of `fd` if its generation is `gen` (a completion for a socket closed without waiting is a stray). */
  socketOf(fd: number, gen: number): UringSocket | undefined {
    const s = this.fds.get(fd);
    return s !== undefined && s.gen === gen ? s : undefined;
  }

  /** Provided buffer `bid`, as a chunk of received bytes. */
  view(bid: number): Uint8Array {
    return this.#views[bid]!;
  }

  /** The id of a provided buffer's view. */
  bufferOf(chunk: Uint8Array): number {
    return (chunk.byteOffset - this.ring.buffers.byteOffset) / this.ring.bufferSize;
  }

  tag(s: UringSocket, kind: number): number {
    return (s.gen << KIND_BITS) | kind;
  }

  // -- fds --------------------------------------------------------------------------

  /** `fd` is `s`'s, under a new generation. */
  attach(s: UringSocket, fd: number): void {
    this.#generation = (this.#generation + 1) % GENERATIONS || 1;
    this.fds.add(s, fd);
    s.gen = this.#generation;
  }

  /** Closes `s`'s fd now (no request may be in flight, or they are abandoned). */
  closeFd(s: UringSocket): void {
    const fd = this.fds.remove(s);
    if (fd < 0) return;
    s.gen = 0;
    s.requests = 0;
    this.sys.close(fd);
  }

  /** The socket's last request completed: its fd goes, and the `close` operations waiting for that return. */
  finishClose(s: UringSocket): void {
    if (s.requests !== 0) return;
    s.closing = false;
    this.closeFd(s);
    s.wakeClosers();
  }

  /** The peer of a connected socket (`{ path: "" }` for Unix sockets). */
  peerAddress(s: UringSocket): Address {
    if (s.kind === "unix") return { path: "" };
    const out: NativeAddressOut = {};
    return this.sys.getpeername(s.fd, out) === 0 ? (out as InetAddress) : { host: "", port: 0 };
  }

  /**
   * Closes the socket for the program at once (its waiters throw
   * `SocketClosed`) and cancels its requests, except a send whose write had
   * returned: that one is let through, and the fd closed once it completed.
   */
  close(s: UringSocket): void {
    if (s.state === "closed") return;
    s.state = "closed";
    s.writing = null;
    s.guard?.seal();
    s.unlinkPath();
    if (s.fd >= 0) {
      if (s.recvArmed && !s.paused) this.cancel(s, RECV);
      if (s.acceptArmed && !s.acceptPaused) this.cancel(s, ACCEPT);
      if (s.pollIn) this.cancel(s, POLL_IN);
      if (s.pollOut) this.cancel(s, POLL_OUT);
      if (s.sendOwner !== null) this.abortSend(s);
      for (const fd of s.accepted) this.sys.close(fd);
      s.accepted.length = 0;
      s.closing = true;
    }
    s.close(); // its readers wake, and fail with SocketClosed
    s.writers.wakeAll();
    this.slotWaiters.wakeWhere((op) => op.sock === s);
    if (s.closing) this.finishClose(s);
  }

  // -- requests ----------------------------------------------------------------------

  /** Arms the socket's multishot recv, unless it is armed, paused, starved or over. */
  armRecv(s: UringSocket): void {
    if (s.recvArmed || s.paused || s.recvStarved || s.state !== "connected") return;
    if (s.ended || s.error !== null || s.receiveShut) return;
    s.recvArmed = true;
    s.requests++;
    this.ring.recv(s.fd, this.tag(s, RECV));
  }

  /** A recv ended for want of provided buffers: armed again once one comes back. */
  starve(s: UringSocket): void {
    s.recvStarved = true;
    this.#starved.push(s);
  }

  /**
   * Arms the listener's accept, unless it is armed or has an error to
   * report: multishot, or for one connection when the listener is shared
   * across domains (the kernel wakes one accept per connection, the one
   * waiting longest, and a multishot accept would wait in front forever).
   */
  armAccept(s: UringSocket): void {
    if (s.acceptArmed || s.acceptError !== null || s.state !== "listening") return;
    s.acceptArmed = true;
    s.acceptPaused = false;
    s.requests++;
    this.ring.accept(s.fd, this.tag(s, ACCEPT), !s.shared);
  }

  /** A one-shot poll for readability (`readable`) or writability, unless one is in flight. */
  armPoll(s: UringSocket, readable: boolean): void {
    if (readable ? s.pollIn : s.pollOut) return;
    if (readable) s.pollIn = true;
    else s.pollOut = true;
    s.requests++;
    const c = this.ring.constants;
    this.ring.poll(s.fd, readable ? c.POLLIN : c.POLLOUT, this.tag(s, readable ? POLL_IN : POLL_OUT));
  }

  /** Sends `len` bytes of staging slot `slot`; `owner` is the parked write they belong to, or null once it returned. */
  send(s: UringSocket, slot: number, len: number, owner: UringSocket["sendOwner"]): void {
    s.sendSlot = slot;
    s.sendOff = 0;
    s.sendLen = len;
    s.sendOwner = owner;
    s.requests++;
    this.ring.send(s.fd, slot, 0, len, this.tag(s, SEND));
  }

  /** Gives up the send in flight (its write was abandoned, or the socket is closing without waiting). */
  abortSend(s: UringSocket): void {
    if (!s.sending || s.sendCancelled) return;
    s.sendCancelled = true;
    this.cancel(s, SEND);
  }

  /** Stops the socket's recv, if one is armed, until `armRecv` (read ahead to the mark; what lands meanwhile is kept). */
  pauseRecv(s: UringSocket): void {
    if (s.recvArmed) this.cancel(s, RECV);
  }

  /** Cancels the socket's request of `kind`; its completion says how it ended. */
  cancel(s: UringSocket, kind: number): void {
    this.ring.cancel(s.fd, this.tag(s, kind), this.tag(s, CANCEL));
  }

  /** Gives a provided buffer back; a recv that starved for one is armed again. */
  giveBuffer(bid: number): void {
    this.ring.giveBuffer(bid);
    const s = this.#starved.shift();
    if (s !== undefined) {
      s.recvStarved = false;
      this.armRecv(s);
    }
  }

  // -- readiness ---------------------------------------------------------------------

  /** Readiness a finished or cancelled reader did not use goes to the next one. */
  passRead(s: UringSocket): void {
    if (s.readerCount === 0) return;
    if (s.accepted.length !== 0 || s.acceptError !== null || s.state === "closed") s.wakeReader();
  }

  /** The sending side is free: the next queued write goes on. */
  passWrite(s: UringSocket): void {
    if (s.writers.length !== 0 && s.writing === null && !s.sending) s.writers.wakeFirst();
  }

  /** A connect or sendto met a socket that is not writable: a one-shot poll says when it is. */
  waitWritable(s: UringSocket): void {
    this.armPoll(s, false);
  }

  isWritable(s: UringSocket): boolean {
    return !s.pollOut;
  }
}
