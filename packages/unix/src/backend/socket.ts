/**
 * The base of a backend's socket records: what `@bobbin/unix` reads of every
 * socket (kind, state, backend), `using`, and how it shows in dumps.
 */
import type { Socket, SocketBackend, SocketKind, SocketState } from "../contract.js";

/**
 * A socket as a backend makes it. `state` is the backend's to move (the
 * `Socket` programs see declares it read-only): `fresh` → `listening`,
 * `bound`, `connecting` → `connected`, and `closed` from any state, as the
 * contract says. `[Symbol.dispose]()` begins closing through the backend's
 * `closeNow`. Add the fields of the roles the socket takes (a stream's
 * received bytes, a listener's connections, a datagram socket's messages).
 *
 * @example
 * ```ts
 * class MySocket extends BackendSocket<MyBackend> {
 *   readonly input = new ReceiveQueue();
 * }
 * socket(kind: SocketKind): Socket { return new MySocket(kind, this); }
 * // in bindAndListen's operation, once listening:
 * sock.state = "listening";
 * ```
 * @throws never
 */
export abstract class BackendSocket<B extends SocketBackend = SocketBackend> implements Socket {
  /** Where the socket stands; the backend moves it. */
  state: SocketState = "fresh";
  /** @internal Its neighbours in its backend's `LiveSockets` while it is there (the list's to set). */
  livePrev: BackendSocket | null = null;
  /** @internal */
  liveNext: BackendSocket | null = null;

  constructor(
    readonly kind: SocketKind,
    readonly backend: B,
  ) {}

  /** Where the socket is, for dumps of what a task waits on: override it to name its addresses ("tcp4 127.0.0.1:3000 ← 127.0.0.1:51234"). */
  describe(): string {
    return this.kind;
  }

  toString(): string {
    return `Socket(${this.kind}, ${this.state})`;
  }

  /** `using`: begins closing, as an ownership finaliser does. */
  [Symbol.dispose](): void {
    this.backend.closeNow(this);
  }
}
