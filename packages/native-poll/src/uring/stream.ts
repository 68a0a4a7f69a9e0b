/**
 * What a connected stream of the uring backend does: a multishot recv
 * receives ahead into provided buffers, which its received-chunk queue lends
 * to `read` and gives back once read (pausing the recv above the read-ahead
 * mark); one SEND at a time goes out of a staging slot; shutting down waits
 * for the send in flight.
 */
import type { ShutdownCommand } from "@bobbin/unix";
import { errnoException } from "../errno.js";
import { Errno } from "../syscalls.js";
import { RECV, SEND, type UringIo } from "./requests.js";
import type { UringSocket } from "./socket.js";

const { ENOBUFS, ECANCELED } = Errno;

/** @internal A completion of the stream's multishot recv. */
export function received(io: UringIo, s: UringSocket, res: number, flags: number): void {
  const c = io.ring.constants;
  if ((flags & c.CQE_F_BUFFER) !== 0) {
    io.ring.buffersInRing--;
    const bid = flags >>> c.CQE_BUFFER_SHIFT;
    if (res > 0) s.push(io.view(bid), res);
    else io.giveBuffer(bid);
  }
  if ((flags & c.CQE_F_MORE) !== 0) return;
  s.recvArmed = false;
  if (res === 0) s.end();
  else if (res === ENOBUFS) {
    if (io.ring.buffersInRing === 0) io.starve(s);
  } else if (res < 0 && res !== ECANCELED) s.fail(errnoException(res, "read"));
  io.armRecv(s);
}

/** @internal The completion of the stream's SEND: the rest goes out, or the sending side is free again. */
export function sent(io: UringIo, s: UringSocket, res: number): void {
  const slot = s.sendSlot;
  if (res >= 0 && res < s.sendLen && !s.sendCancelled && s.state !== "closed") {
    // MSG_WAITALL stops short only when interrupted: send the rest.
    s.sendOff += res;
    s.sendLen -= res;
    io.ring.send(s.fd, slot, s.sendOff, s.sendLen, io.tag(s, SEND));
    s.requests++;
    return;
  }
  s.sendSlot = -1;
  s.sendOwner = null;
  s.sendCancelled = false;
  io.ring.freeSlot(slot);
  io.slotWaiters.wakeFirst();
  if (res < 0 && res !== ECANCELED) s.sendError ??= errnoException(res, "write");
  if (s.shutPending) {
    s.shutPending = false;
    io.sys.shutdown(s.fd, 1);
  }
  s.writers.wakeFirst();
}

/** @internal `shutdown`: the sending side after the send in flight, if any; the receiving side at once. */
export function shutdown(io: UringIo, s: UringSocket, how: ShutdownCommand): void {
  if (s.fd < 0) return;
  if (how !== "receive" && !s.sendShut) {
    s.sendShut = true;
    if (s.sending) s.shutPending = true;
    else io.sys.shutdown(s.fd, 1);
    s.writers.wakeAll(); // they fail with EPIPE when they retry
  }
  if (how !== "send" && !s.receiveShut) {
    io.sys.shutdown(s.fd, 0);
    if (s.recvArmed && !s.paused) io.cancel(s, RECV);
    s.shutdownReceive();
  }
}

/**
 * @internal Copies `buf[from, from + n)` (at most a slot) into a staging
 * slot and sends it, for `owner` (null: a write that has returned); false,
 * sending nothing, when no slot is free.
 */
export function sendPiece(io: UringIo, s: UringSocket, buf: Uint8Array, from: number, n: number, owner: UringSocket["sendOwner"]): boolean {
  const ring = io.ring;
  const slot = ring.takeSlot();
  if (slot < 0) return false;
  ring.staging.set(buf.subarray(from, from + n), slot * ring.stagingSize);
  io.send(s, slot, n, owner);
  return true;
}
