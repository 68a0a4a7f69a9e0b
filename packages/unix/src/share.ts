/**
 * Sockets across domains. A listening socket given to `B.call` or
 * `B.parallel` (or returned by a parallel task) arrives in the other domain
 * as a socket of that domain's backend over the same OS listening socket, so
 * that every domain can `accept` on it (the book's parallel echo server).
 *
 * Core's portable seam does the crossing: `encode` asks the socket's backend
 * to describe the listening socket (`Backend.share`: its kind, descriptor,
 * address, backlog and a guard), and `decode`, in the receiving domain, asks
 * that domain's backend to make a socket of its own from the description
 * (`Backend.adopt`: typically over a duplicate of the descriptor, which it
 * closes itself). Each domain has one object per shared socket: the same
 * socket sent to a domain twice, or back to where it came from, is the very
 * same object there while it is open.
 *
 * The guard keeps the descriptor valid while a receiving domain duplicates
 * it: the owner seals the guard before it closes the descriptor, and waits
 * for the duplications in progress (a few microseconds for `dup(2)`, the
 * time of a `spawn` for the libuv backend) to end first. A receiver that
 * finds the guard sealed makes a socket that is already closed.
 */
import { randomUUID } from "node:crypto";
import * as B from "@bobbin/core";
import type { Address, Backend, Socket, SocketKind } from "./backend.js";
import { currentBackend, isRegisteredBackend } from "./context.js";
import { SocketClosed } from "./errors.js";
import { isStreamKind } from "./socket.js";

/**
 * What crosses domains for a listening socket: made by `Backend.share` in
 * the sending domain, given to `Backend.adopt` in the receiving one. Every
 * field is cloneable; `guard` is shared memory.
 *
 * @example
 * ```ts
 * share(sock: Socket): SharedSocket {
 *   const s = sock as MySocket;
 *   s.guard ??= new ShareGuard();
 *   return { kind: s.kind, fd: s.fd, address: this.localAddress(s), backlog: s.backlog, guard: s.guard.buffer };
 * }
 * ```
 */
export interface SharedSocket {
  /** A stream kind: `"tcp4"`, `"tcp6"` or `"unix"`. */
  readonly kind: SocketKind;
  /** The listening socket's file descriptor in the process, valid while `guard` can be pinned. */
  readonly fd: number;
  /** The address it listens on (what `getsockname` says in the receiving domain). */
  readonly address: Address;
  /** The backlog it was listening with (a backend that calls `listen(2)` again keeps it). */
  readonly backlog: number;
  /** The buffer of the sending socket's {@link ShareGuard}. */
  readonly guard: SharedArrayBuffer;
}

/** The sign bit of the guard's word: the owner is closing the descriptor. */
const SEALED = 1 << 30;
/** How long `seal` waits for duplications in progress. */
const SEAL_WAIT_MS = 5000;

/**
 * Keeps a shared descriptor valid while other domains duplicate it: one
 * `Int32` in a SharedArrayBuffer counting the duplications in progress, and
 * a bit set once the owner closes. Receivers `pin` before they duplicate the
 * descriptor and `unpin` right after; the owner `seal`s before closing it.
 *
 * @example
 * ```ts
 * // receiving domain (Backend.adopt)
 * const guard = ShareGuard.of(shared.guard);
 * if (!guard.pin()) return closedSocket(shared.kind);   // the owner closed it meanwhile
 * let fd: number;
 * try { fd = sys.dup(shared.fd); } finally { guard.unpin(); }
 * // owning domain (close)
 * s.guard?.seal();
 * sys.close(s.fd);
 * ```
 */
export class ShareGuard {
  private readonly cell: Int32Array;

  /** A new guard, or the guard of a buffer that came from another domain. */
  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.cell = new Int32Array(buffer, 0, 1);
  }

  /**
   * The guard of a `SharedSocket`'s buffer.
   * @throws TypeError when `buffer` is not a guard's buffer.
   */
  static of(buffer: SharedArrayBuffer): ShareGuard {
    if (!(buffer instanceof SharedArrayBuffer) || buffer.byteLength < 4) {
      throw new TypeError("a shared socket arrived without its guard: both domains must run the same version of @bobbin/unix");
    }
    return new ShareGuard(buffer);
  }

  /** Whether the owner closed (or is closing) the descriptor. */
  get sealed(): boolean {
    return (Atomics.load(this.cell, 0) & SEALED) !== 0;
  }

  /** Receivers: holds the descriptor open; false when the owner closed it (do not touch the descriptor then). */
  pin(): boolean {
    for (;;) {
      const v = Atomics.load(this.cell, 0);
      if ((v & SEALED) !== 0) return false;
      if (Atomics.compareExchange(this.cell, 0, v, v + 1) === v) return true;
    }
  }

  /** Receivers: the duplicate is made (or failed); the owner may close. */
  unpin(): void {
    Atomics.sub(this.cell, 0, 1);
    Atomics.notify(this.cell, 0);
  }

  /**
   * The owner: no receiver may pin the descriptor any more; returns once
   * those that had pinned it unpinned it (at most a few seconds, in case a
   * receiving thread died), so that the descriptor can be closed.
   */
  seal(): void {
    const deadline = Date.now() + SEAL_WAIT_MS;
    for (let v = Atomics.or(this.cell, 0, SEALED) | SEALED; (v & ~SEALED) !== 0; v = Atomics.load(this.cell, 0)) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      Atomics.wait(this.cell, 0, v, left);
    }
  }
}

/** The wire form of a socket: its identity across domains and its backend's description. */
interface WireSocket {
  readonly id: string;
  readonly socket: SharedSocket;
}

/** The identity of each socket that crossed domains (one per OS listening socket). */
const ids = new WeakMap<Socket, string>();
/** Per backend (domain): the open socket of each identity. */
const known = new WeakMap<Backend, Map<string, Socket>>();

function knownOf(backend: Backend): Map<string, Socket> {
  let map = known.get(backend);
  if (map === undefined) known.set(backend, (map = new Map()));
  return map;
}

function isSocket(value: object): value is Socket {
  const s = value as Partial<Socket>;
  return typeof s.kind === "string" && typeof s.state === "string" && isRegisteredBackend(s.backend);
}

function encode(sock: Socket): WireSocket {
  if (sock.state === "closed") throw new SocketClosed("sending a socket to another domain");
  if (!isStreamKind(sock.kind) || sock.state !== "listening") {
    throw new TypeError(
      `only listening stream sockets can be given to another domain (B.call, B.parallel); this one is a ${sock.state} ${sock.kind} socket. ` +
        "Pass the listening socket and accept in the other domain, or keep the connection (or UDP socket) in the domain that made it",
    );
  }
  const backend = sock.backend as Backend; // isSocket checked that it is a domain's backend
  if (typeof backend.share !== "function") {
    throw new TypeError(
      `the ${backend.name} backend cannot give sockets to other domains (it has no share method; see "Domains" in @bobbin/unix's README)`,
    );
  }
  const socket = backend.share(sock);
  let id = ids.get(sock);
  if (id === undefined) {
    id = randomUUID();
    ids.set(sock, id);
  }
  knownOf(backend).set(id, sock);
  return { id, socket };
}

function decode(wire: WireSocket): Socket {
  if (wire === null || typeof wire !== "object" || typeof wire.id !== "string" || wire.socket === null || typeof wire.socket !== "object") {
    throw new TypeError("a socket arrived from another domain in a form this version of @bobbin/unix does not know");
  }
  const backend = currentBackend("receiving a socket from another domain");
  const map = knownOf(backend);
  const same = map.get(wire.id);
  if (same !== undefined && same.state !== "closed") return same;
  if (typeof backend.adopt !== "function") {
    throw new TypeError(
      `a socket arrived in domain ${B.Domain.self()}, whose ${backend.name} backend cannot adopt sockets from other domains (it has no adopt method)`,
    );
  }
  const sock = backend.adopt(wire.socket);
  ids.set(sock, wire.id);
  map.set(wire.id, sock);
  return sock;
}

B.definePortable<Socket, WireSocket>("@bobbin/unix/socket", { test: isSocket, encode, decode });
