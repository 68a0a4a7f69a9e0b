/** What a UDP socket of the native backend does: `recvmsg` while readable. */
import type { Address } from "@bobbin/unix";
import { errnoException } from "../errno.js";
import type { NativeAddressOut } from "../load.js";
import { wouldBlock } from "../raw/io.js";
import type { EpollIo } from "./io.js";
import type { NativeSocket } from "./socket.js";

/**
 * @internal One datagram into `buf[off, off + len)` and its sender, or null
 * when none is there (the socket is not readable until its next edge).
 * @throws the receive's error.
 */
export function receive(io: EpollIo, s: NativeSocket, buf: Uint8Array, off: number, len: number): [number, Address] | null {
  if (!s.readable) return null;
  const out: NativeAddressOut = {};
  const n = io.sys.recvfrom(s.fd, buf, off, len, out);
  if (n >= 0) {
    if (s.readerCount !== 0) io.passRead(s);
    return [n, out as Address];
  }
  if (wouldBlock(n)) {
    s.readable = false;
    return null;
  }
  throw errnoException(n, "recvmsg");
}
