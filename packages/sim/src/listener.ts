/**
 * A listening stream socket: the queue of established connections not yet
 * accepted (at most `backlog`; a SYN that finds it full is dropped, and its
 * client sends it again later, as on Linux), and the tasks waiting in
 * `accept`.
 */
import type { Address } from "@bobbin/unix";
import { Inbox } from "./inbox.js";
import type { Admitting, Endpoint, Syn } from "./stream.js";

/** @internal What a listener makes for each connection it admits: the server's socket and its end. */
export interface Admitted<S> {
  readonly socket: S;
  readonly end: Endpoint;
}

/** @internal A listening socket's queue; `S` is the socket type of its connections. */
export class Listener<S> implements Admitting {
  /** Connections established and not accepted yet (at most the backlog), and the tasks in `accept`. */
  readonly inbox: Inbox<Admitted<S>>;
  /** Clients that already have a connection here (a SYN sent again is not a new one). */
  private readonly known = new WeakSet<Endpoint>();

  constructor(
    /** How many connections may wait to be accepted. */
    backlog: number,
    /** Makes the server's socket and end of the connection a SYN asks for. */
    private readonly connection: (syn: Syn) => Admitted<S>,
    /** Closes a connection nobody accepted (it is reset). */
    private readonly reset: (admitted: Admitted<S>) => void,
  ) {
    this.inbox = new Inbox(backlog);
  }

  /** A SYN arrived: the server's end of a new connection, or null when it is dropped (a duplicate, or the queue is full). */
  admit(syn: Syn): Endpoint | null {
    const client = syn.client;
    if (this.known.has(client) || this.inbox.full) return null;
    this.known.add(client);
    const admitted = this.connection(syn);
    admitted.end.peer = client;
    admitted.end.remote = peerAddress(client);
    this.inbox.post(admitted);
    return admitted.end;
  }

  /** The listener closes: acceptors are woken when `wake`, connections not accepted are reset. */
  close(wake: boolean): void {
    for (const admitted of this.inbox.close(wake)) this.reset(admitted);
  }
}

/** The address `accept` reports for a client: its `ip:port`, or `{ path: "" }` for a Unix socket. */
function peerAddress(client: Endpoint): Address {
  const sock = client.socket;
  return sock.isUnix ? { path: "" } : { host: sock.ip, port: sock.port };
}
