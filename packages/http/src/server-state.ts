/**
 * What the requests and responses of a server of `serve` need to know of it:
 * the largest body its operations read, and whether it is stopping (its
 * responses then close their connection).
 */

/** @internal */
export interface ServerState {
  /** The largest body `bytes`, `text` and `json` read. */
  readonly bodyLimit: number;
  /** The server stops: responses say `connection: close`. */
  readonly stopping: boolean;
}

const states = new WeakMap<object, ServerState>();

/** @internal Ties `state` to Node's server: its requests and responses find it through their socket. */
export function attach(server: object, state: ServerState): void {
  states.set(server, state);
}

/** @internal The state of the server a socket belongs to (Node sets `socket.server`), if it is one of `serve`'s. */
export function stateOf(socket: unknown): ServerState | undefined {
  const server = (socket as { server?: object } | null | undefined)?.server;
  return server === undefined ? undefined : states.get(server);
}
