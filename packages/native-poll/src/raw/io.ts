/**
 * What the operations both raw-descriptor backends share (`raw/ops.ts`)
 * need of a backend's I/O: its system calls and descriptors, and how it
 * hears that a socket is writable.
 */
import type { ParkedCount } from "@bobbin/unix/backend";
import type { NativeSyscalls } from "../load.js";
import { Errno } from "../syscalls.js";
import type { RawSocket } from "./socket.js";

const { EAGAIN, EWOULDBLOCK } = Errno;

/** @internal A non-blocking call found nothing to do (`EAGAIN`, or `EWOULDBLOCK` where it differs). */
export function wouldBlock(rc: number): boolean {
  return rc === EAGAIN || rc === EWOULDBLOCK;
}

/** @internal A raw-descriptor backend's I/O, as the shared operations see it. */
export interface RawIo<S extends RawSocket> {
  readonly sys: NativeSyscalls;
  /** The operations parked on the backend's sockets, which hold its handle in Node's loop. */
  readonly parked: ParkedCount;
  readonly solSocket: number;
  readonly soReuseAddr: number;
  /** Makes `fd` the socket's (registered with the backend's set or ring). */
  attach(s: S, fd: number): void;
  /** Closes the socket's fd (the socket object lives on, fresh again or closed). */
  closeFd(s: S): void;
  /** The sending side is free: the next queued writer goes on. */
  passWrite(s: S): void;
  /** A connect or sendto found the socket not writable: arrange for its writers to be woken when it is. */
  waitWritable(s: S): void;
  /** Whether the socket is writable (as far as the backend heard) since `waitWritable`. */
  isWritable(s: S): boolean;
}
