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
 * The description's guard (`ShareGuard`) keeps the descriptor valid while a
 * receiving domain duplicates it.
 */
import { randomUUID } from "node:crypto";
import * as B from "@bobbin/core";
import { currentBackend, isRegisteredBackend } from "./context.js";
import type { Backend, SharedSocket, Socket } from "./contract.js";
import { SocketClosed } from "./errors.js";
import { isStreamKind } from "./kinds.js";

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

let defined = false;

/**
 * @internal Lets sockets cross domains in this thread (core's portable
 * seam), once: called where a domain's backend is made.
 */
export function shareSockets(): void {
  if (defined) return;
  defined = true;
  B.definePortable<Socket, WireSocket>("@bobbin/unix/socket", { test: isSocket, encode, decode });
}
