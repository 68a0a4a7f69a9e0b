/**
 * What the ring's completions do to the uring backend's sockets: each names
 * its socket and request by its user data (`requests.ts`); a stray one — for
 * a socket closed without waiting — gives back what it carries.
 */
import { accepted } from "./listener.js";
import { ACCEPT, CANCEL, KIND_BITS, POLL_IN, RECV, SEND, type UringIo } from "./requests.js";
import { received, sent } from "./stream.js";

const KIND_MASK = (1 << KIND_BITS) - 1;

/** @internal One completion of the ring. */
export function complete(io: UringIo, fd: number, tag: number, res: number, flags: number): void {
  const kind = tag & KIND_MASK;
  if (kind === CANCEL) return; // the cancelled request says how it ended
  const s = io.socketOf(fd, tag >>> KIND_BITS);
  if (s === undefined) {
    stray(io, kind, res, flags);
    return;
  }
  if ((flags & io.ring.constants.CQE_F_MORE) === 0) s.requests--;
  switch (kind) {
    case RECV:
      received(io, s, res, flags);
      break;
    case ACCEPT:
      accepted(io, s, res, flags);
      break;
    case SEND:
      sent(io, s, res);
      break;
    case POLL_IN:
      s.pollIn = false;
      s.wakeReader();
      break;
    default:
      s.pollOut = false;
      s.writers.wakeFirst();
  }
  if (s.closing) io.finishClose(s);
}

/** A completion for a socket closed without waiting (finaliser, drain): what it carries goes back. */
function stray(io: UringIo, kind: number, res: number, flags: number): void {
  const c = io.ring.constants;
  if ((flags & c.CQE_F_BUFFER) !== 0) {
    io.ring.buffersInRing--;
    io.giveBuffer(flags >>> c.CQE_BUFFER_SHIFT);
  }
  if (kind === ACCEPT && res >= 0) io.sys.close(res);
}
