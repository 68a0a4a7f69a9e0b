/**
 * A listening stream socket: the queue of established connections not yet
 * accepted (at most `backlog`; a SYN that finds it full is dropped, and its
 * client sends it again later, as on Linux), and the tasks waiting in
 * `accept`.
 */
import type { Address } from "@bobbin/unix";
import { Inbox } from "./inbox.js";
import { SimSocket } from "./socket.js";
import { Endpoint, type Syn } from "./stream.js";

/** @internal */
export class Listener {
  /** Connections established and not accepted yet (at most the backlog), and the tasks in `accept`. */
  readonly inbox: Inbox<SimSocket>;
  /** Clients that already have a connection here (a SYN sent again is not a new one). */
  private readonly known = new WeakSet<Endpoint>();

  constructor(
    readonly socket: SimSocket,
    /** How many connections may wait to be accepted. */
    backlog: number,
  ) {
    this.inbox = new Inbox(backlog);
  }

  /** A SYN arrived: the server's end of a new connection, or null when it is dropped (a duplicate, or the queue is full). */
  admit(syn: Syn): Endpoint | null {
    const client = syn.client;
    if (this.known.has(client) || this.inbox.full) return null;
    this.known.add(client);
    const listening = this.socket;
    const sock = new SimSocket(listening.kind, listening.backend, listening.host);
    sock.state = "connected";
    if (listening.isUnix) sock.path = listening.path;
    else {
      sock.ip = syn.ip;
      sock.port = listening.port;
    }
    const server = new Endpoint(sock, syn.network);
    server.peer = client;
    server.remote = peerAddress(client.socket);
    sock.endpoint = server;
    listening.host.sockets.add(sock);
    this.inbox.post(sock);
    return server;
  }

  /** The listener closes: acceptors are woken when `wake`, connections not accepted are reset. */
  close(wake: boolean): void {
    for (const sock of this.inbox.close(wake)) {
      sock.state = "closed";
      sock.host.sockets.delete(sock);
      sock.endpoint!.close(true, false);
    }
  }
}

/** The address `accept` reports for a client: its `ip:port`, or `{ path: "" }` for a Unix socket. */
function peerAddress(client: SimSocket): Address {
  return client.isUnix ? { path: "" } : { host: client.ip, port: client.port };
}
