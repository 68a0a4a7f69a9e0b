/**
 * The base of a backend whose sockets hold Node handles: what every such
 * backend answers alike at the end of a run or of a domain.
 */
import { LiveSockets } from "./live.js";
import { NodeLoop } from "./node-loop.js";
import type { NodeSocket } from "./node-socket.js";

/**
 * A backend over Node handles: the events half (`NodeLoop`), its sockets
 * that hold something of Node's (`live`: a `NodeSocket` enters and leaves
 * it by itself), and the contract's end — `finaliser` (the domain stops; a
 * worker domain has no `drain`) and `drain` close every socket still live
 * at once (`closeNow`), and `drain` settles once none holds anything of
 * Node's.
 *
 * @example
 * ```ts
 * class MyBackend extends NodeBackend implements Backend {
 *   readonly name = "mine";
 *   socket(kind: SocketKind): Socket {
 *     return new MySocket(kind, this); // its `live`: a getter returning this.live
 *   }
 *   // … the contract's other entry points
 * }
 * ```
 * @throws never: closing is the sockets' `closeNow`, and `drain`'s Promise never rejects.
 */
export abstract class NodeBackend extends NodeLoop {
  /** Sockets holding a Node handle or a name lookup: what `drain` waits for. */
  readonly live = new LiveSockets<NodeSocket>();

  /** Core's `finaliser`: the domain stops; what is still open begins closing. */
  override finaliser(): void {
    super.finaliser();
    this.#closeAll();
  }

  /** The contract's `drain`: closes what is open; settles once no socket holds anything of Node's. */
  drain(): Promise<void> {
    this.timers.clear();
    this.#closeAll();
    return this.live.drained();
  }

  #closeAll(): void {
    for (const s of this.live.all()) s.closeNow();
  }
}
