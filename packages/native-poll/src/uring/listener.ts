/**
 * What a listening socket of the uring backend does: a multishot accept
 * takes a few connections ahead of `accept` (paused past that), or one per
 * waiting `accept` once the socket is shared with other domains.
 */
import type { Address } from "@bobbin/unix";
import { errnoException } from "../errno.js";
import { Errno } from "../syscalls.js";
import { ACCEPT, type UringIo } from "./requests.js";
import { UringSocket } from "./socket.js";

const { ECANCELED, ECONNABORTED, EPROTO } = Errno;

/** Connections a listener accepts ahead of `accept` before its multishot accept is cancelled. */
const ACCEPT_AHEAD = 16;

/** @internal A completion of the listener's accept: a connection for `accept`, or why no more come. */
export function accepted(io: UringIo, s: UringSocket, res: number, flags: number): void {
  if (res >= 0) {
    if (s.state === "closed") io.sys.close(res);
    else s.accepted.push(res);
  }
  if ((flags & io.ring.constants.CQE_F_MORE) === 0) {
    s.acceptArmed = false;
    // The connection died before it was taken: go on with the next one.
    if (res < 0 && res !== ECANCELED && res !== ECONNABORTED && res !== EPROTO) s.acceptError = errnoException(res, "accept");
    if (s.readerCount > s.accepted.length) io.armAccept(s); // for acceptors the queue will not serve
  } else if (s.accepted.length >= ACCEPT_AHEAD && !s.acceptPaused) {
    s.acceptPaused = true;
    io.cancel(s, ACCEPT);
  }
  if (s.accepted.length !== 0 || s.acceptError !== null) s.wakeReader();
}

/**
 * @internal The oldest accepted connection, connected and registered, or
 * null (the accept is armed: a completion wakes the acceptor).
 * @throws the error that ended the accept (EMFILE…), once: the listener stays.
 */
export function takeConnection(io: UringIo, s: UringSocket): [UringSocket, Address] | null {
  const fd = s.accepted.shift();
  if (fd !== undefined) {
    const client = new UringSocket(s.kind, s.backend, io.parked);
    client.state = "connected";
    io.attach(client, fd);
    io.passRead(s);
    return [client, io.peerAddress(client)];
  }
  const error = s.acceptError;
  if (error !== null) {
    s.acceptError = null;
    throw error;
  }
  io.armAccept(s);
  return null;
}

/** @internal The listener is shared from now on: one accept per waiting `accept` (a multishot one in flight is cancelled). */
export function shareAccepts(io: UringIo, s: UringSocket): void {
  if (s.shared) return;
  s.shared = true;
  if (s.acceptArmed && !s.acceptPaused) {
    s.acceptPaused = true;
    io.cancel(s, ACCEPT);
  }
}
