/**
 * The sockets of a raw-descriptor backend by descriptor, and those that have
 * one (what `drain` closes): kept alike by both backends, which differ in what
 * they do around it (register with the set, or number the fd's generation).
 */
import { LiveSockets } from "@bobbin/unix/backend";
import type { RawSocket } from "./socket.js";

/** @internal */
export class FdTable<S extends RawSocket> {
  /** The sockets with an open fd. */
  readonly live = new LiveSockets<S>();
  readonly #byFd: (S | undefined)[] = [];

  /** The socket whose fd is `fd`, if any. */
  get(fd: number): S | undefined {
    return this.#byFd[fd];
  }

  /** `fd` is `s`'s. */
  add(s: S, fd: number): void {
    s.fd = fd;
    this.#byFd[fd] = s;
    this.live.add(s);
  }

  /** `s` lets go of its fd, returned for the caller to close (-1 when it had none). */
  remove(s: S): number {
    const fd = s.fd;
    if (fd < 0) return -1;
    s.fd = -1;
    if (this.#byFd[fd] === s) this.#byFd[fd] = undefined;
    this.live.delete(s);
    return fd;
  }
}
