/** What a listening socket of the native backend does: `accept4`, past connections that died waiting. */
import type { Address, InetAddress } from "@bobbin/unix";
import { errnoException } from "../errno.js";
import type { NativeAddressOut } from "../load.js";
import { wouldBlock } from "../raw/io.js";
import { Errno } from "../syscalls.js";
import type { EpollIo } from "./io.js";
import { NativeSocket } from "./socket.js";

const { ECONNABORTED, EPROTO } = Errno;

/**
 * @internal One pending connection of `s`, connected and registered, or
 * null when none is pending (the socket is not readable until its next edge).
 * @throws the accept's error (EMFILE, ENFILE…): the listener stays.
 */
export function acceptOne(io: EpollIo, s: NativeSocket): [NativeSocket, Address] | null {
  for (;;) {
    if (!s.readable) return null;
    const out: NativeAddressOut = {};
    const fd = io.sys.accept(s.fd, out);
    if (fd >= 0) {
      const client = new NativeSocket(s.kind, s.backend, io.parked);
      client.state = "connected";
      io.attach(client, fd);
      io.passRead(s); // more connections may be pending for other acceptors
      return [client, s.kind === "unix" ? { path: "" } : (out as InetAddress)];
    }
    // None pending (another domain may have taken it: a shared listener).
    if (wouldBlock(fd)) {
      s.readable = false;
      return null;
    }
    // The connection died before we took it: take the next one.
    if (fd === ECONNABORTED || fd === EPROTO) continue;
    throw errnoException(fd, "accept");
  }
}
