/**
 * The poll backend: a third-party backend of `@bobbin/unix` written on
 * Miou's events contract alone (core's `syscall`/`suspend`/`signal`,
 * `select(block, cancelled)`, `interrupt`), over Node's `net` and `dgram`.
 * This module only defines things: worker domains import it to make their
 * own backend (`defineBackend`).
 */
import type { AddressInfo } from "node:net";
import type * as B from "@bobbin/core";
import {
  type Address,
  type Backend,
  defineBackend,
  type ListenOptions,
  type ShutdownCommand,
  type Socket,
  type SocketKind,
} from "@bobbin/unix";
import type { DeadlineHandle } from "@bobbin/unix/backend";
import { Clock } from "./clock.js";
import { accept, bindAndListen, close, connect } from "./connections.js";
import { recvfrom, sendto } from "./datagrams.js";
import { Poller } from "./poller.js";
import { PollSocket, type SocketHost } from "./socket.js";
import { read, write } from "./streams.js";

/**
 * A backend whose every wait is a suspension point signalled by `select`.
 * `@bobbin/unix` checks the arguments and the socket's state before calling
 * it, so each method receives a socket of its own, in a state its operation
 * accepts.
 *
 * @example
 * ```ts
 * await run(main, { backend: pollBackend });
 * ```
 * @throws never itself; its operations throw Node's system errors (with `code`), `SocketClosed` and `Timeout`.
 */
export class PollBackend implements Backend, SocketHost {
  readonly name = "poll";
  readonly poller = new Poller();
  private readonly clock = new Clock(this.poller);
  /** Sockets holding a Node handle or a lookup: what `drain` waits for. */
  private readonly live = new Set<PollSocket>();
  private drained: (() => void) | null = null;

  // -- core's events --------------------------------------------------------------

  select(block: boolean, cancelled: readonly B.Uid[]): B.Signal[] | Promise<B.Signal[]> {
    return this.poller.select(block, cancelled);
  }

  interrupt(): void {
    this.poller.interrupt();
  }

  /** The domain stops: a pending `select` returns, timers go, and what is still open begins closing (a worker domain has no `drain`). */
  finaliser(): void {
    this.poller.stop();
    this.clock.timers.clear();
    for (const sock of [...this.live]) sock.closeNow();
  }

  // -- sockets --------------------------------------------------------------------

  socket(kind: SocketKind): Socket {
    return new PollSocket(kind, this, this);
  }

  bindAndListen(sock: Socket, addr: Address, options: Required<ListenOptions>): B.Operation<void> {
    return bindAndListen(sock as PollSocket, addr, options);
  }

  accept(sock: Socket): B.Operation<[Socket, Address]> {
    return accept(sock as PollSocket);
  }

  connect(sock: Socket, addr: Address): B.Operation<void> {
    return connect(sock as PollSocket, addr);
  }

  read(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<number> {
    return read(sock as PollSocket, buf, off, len);
  }

  write(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<void> {
    return write(sock as PollSocket, buf, off, len);
  }

  recvfrom(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<[number, Address]> {
    return recvfrom(sock as PollSocket, buf, off, len);
  }

  sendto(sock: Socket, buf: Uint8Array, off: number, len: number, addr: Address): B.Operation<number> {
    return sendto(sock as PollSocket, buf, off, len, addr);
  }

  shutdown(sock: Socket, how: ShutdownCommand): void {
    const s = sock as PollSocket;
    if (how !== "receive" && !s.sendShut) {
      s.sendShut = true;
      if (s.stream !== null && !s.stream.destroyed) s.stream.end();
    }
    if (how !== "send" && !s.receiveShut) {
      s.receiveShut = true;
      s.poller.touch(s); // readers see the end at once
    }
  }

  close(sock: Socket): B.Operation<void> {
    return close(sock as PollSocket);
  }

  closeNow(sock: Socket): void {
    (sock as PollSocket).closeNow();
  }

  localAddress(sock: Socket): Address {
    const s = sock as PollSocket;
    if (s.kind === "unix") return { path: s.path };
    const a = ((s.server ?? s.stream)?.address() ?? udpAddress(s)) as AddressInfo | string | null;
    if (a !== null && typeof a === "object" && typeof a.port === "number") return { host: a.address, port: a.port };
    throw new TypeError(`localAddress(): the ${s.kind} socket is not bound yet`);
  }

  // -- time -------------------------------------------------------------------------

  now(): number {
    return this.clock.now();
  }

  sleep(ms: number): B.Operation<void> {
    return this.clock.sleep(ms);
  }

  deadline(at: number, fire: () => void): DeadlineHandle {
    return this.clock.deadline(at, fire);
  }

  // -- the end of the run ---------------------------------------------------------

  /** Closes what is still open, and settles once no socket holds anything of Node's. */
  drain(): Promise<void> {
    this.clock.timers.clear();
    for (const sock of [...this.live]) sock.closeNow();
    if (this.live.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drained = resolve;
    });
  }

  holding(sock: PollSocket): void {
    this.live.add(sock);
  }

  released(sock: PollSocket): void {
    this.live.delete(sock);
    if (this.live.size !== 0 || this.drained === null) return;
    const resolve = this.drained;
    this.drained = null;
    resolve();
  }
}

/** A UDP socket's address, or null before it is bound (`dgram` throws then). */
function udpAddress(s: PollSocket): AddressInfo | null {
  try {
    return s.udp?.address() ?? null;
  } catch {
    return null;
  }
}

/**
 * The poll backend's factory, defined with `defineBackend` so that worker
 * domains (`B.call`, `B.parallel`) make their own.
 *
 * @example
 * ```ts
 * import { run } from "@bobbin/unix";
 * import { pollBackend } from "./poll-backend/backend.js";
 * await run(main, { backend: pollBackend });
 * ```
 * @throws never.
 */
export const pollBackend: (domain: number) => PollBackend = defineBackend(import.meta.url, "poll", () => new PollBackend());
