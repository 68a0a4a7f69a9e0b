/** What a UDP socket of the uring backend does: `recvmsg` when a datagram is there, a one-shot poll when not. */
import type { Address } from "@bobbin/unix";
import { errnoException } from "../errno.js";
import type { NativeAddressOut } from "../load.js";
import { wouldBlock } from "../raw/io.js";
import type { UringIo } from "./requests.js";
import type { UringSocket } from "./socket.js";

/**
 * @internal One datagram into `buf[off, off + len)` and its sender, or null
 * (a poll is armed: its completion wakes the receiver).
 * @throws the receive's error.
 */
export function receive(io: UringIo, s: UringSocket, buf: Uint8Array, off: number, len: number): [number, Address] | null {
  const out: NativeAddressOut = {};
  const n = io.sys.recvfrom(s.fd, buf, off, len, out);
  if (n >= 0) return [n, out as Address];
  if (!wouldBlock(n)) throw errnoException(n, "recvmsg");
  io.armPoll(s, true);
  return null;
}
