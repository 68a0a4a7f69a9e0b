/**
 * The base of a backend's socket records: what `@bobbin/unix` reads of every
 * socket (kind, state, backend), its receiving side (the kit's
 * `ReceiveQueue`, which its readers park in), `using`, and how it shows in
 * dumps.
 */
import type { SocketBackend, SocketKind } from "../contract.js";
import { ReceiveQueue } from "./receive-queue.js";

/**
 * A socket as a backend makes it: one record for the socket, its receiving
 * side and the operation of its `readChunk` (see {@link ReceiveQueue}), so
 * that an idle connection is one object of the backend's. `state` is the
 * backend's to move (the `Socket` programs see declares it read-only):
 * `fresh` → `listening`, `bound`, `connecting` → `connected`, and `closed`
 * from any state, as the contract says. `[Symbol.dispose]()` begins closing
 * through the backend's `closeNow`. Add the fields of the roles the socket
 * takes (a listener's connections, a datagram socket's messages); keep what
 * is the same for every socket of a backend (a high-water mark, a count of
 * parked operations) in getters rather than fields, since every connection
 * pays for a field.
 *
 * @example
 * ```ts
 * class MySocket extends BackendSocket<MyBackend> {
 *   protected override get highWater() { return 64 * 1024; }
 * }
 * socket(kind: SocketKind): Socket { return new MySocket(kind, this); }
 * read(sock, buf, off, len) { return (sock as MySocket).readOp(buf, off, len); }
 * readChunk(sock) { return (sock as MySocket).readChunk(); }
 * // in bindAndListen's operation, once listening:
 * sock.state = "listening";
 * ```
 * @throws never
 */
export abstract class BackendSocket<B extends SocketBackend = SocketBackend> extends ReceiveQueue {
  /** @internal Its neighbours in its backend's `LiveSockets` while it is there (the list's to set). */
  livePrev: BackendSocket | null = null;
  /** @internal */
  liveNext: BackendSocket | null = null;

  constructor(
    kind: SocketKind,
    readonly backend: B,
  ) {
    super(kind);
  }

  /** Where the socket is, for dumps of what a task waits on: override it to name its addresses ("tcp4 127.0.0.1:3000 ← 127.0.0.1:51234"). */
  where(): string {
    return this.kind;
  }

  override toString(): string {
    return `Socket(${this.kind}, ${this.state})`;
  }

  /** `using`: begins closing, as an ownership finaliser does. */
  [Symbol.dispose](): void {
    this.backend.closeNow(this);
  }
}
