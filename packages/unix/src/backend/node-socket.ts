/**
 * Sockets over Node's own handles (`net`, `dgram`, streams): what they hold
 * of Node's, counted, so that `close` returns — and a run ends — only once
 * it is all gone. Two facts of Node make this more than a flag:
 *
 * - a `net.Server`'s or `dgram` socket's `'close'` event comes before its
 *   handle is gone from Node's loop: libuv frees it in the "close callbacks"
 *   phase that follows (see {@link afterHandleClose});
 * - Node cannot cancel a `dns.lookup`: one in flight belongs to its socket
 *   until it answers, so closing the socket waits for it too.
 */
import * as dns from "node:dns";
import type { SocketBackend } from "../contract.js";
import { SocketClosed } from "../errors.js";
import type { LiveSockets } from "./live.js";
import { Parked } from "./parked.js";
import { ColdState } from "./receive-queue.js";
import { BackendSocket } from "./socket.js";
import { WaitQueue } from "./wait-queue.js";

/**
 * Runs `fn` once the Node handles closed now are really gone: after the
 * next "close callbacks" phase of Node's loop. (The first immediate runs in
 * this turn's check phase, before the close callbacks; the one it schedules
 * runs in the next turn, after them.)
 *
 * @example
 * ```ts
 * server.close();
 * afterHandleClose(() => sock.release());   // not in the 'close' event: the handle is still there then
 * ```
 * @throws never
 */
export function afterHandleClose(fn: () => void): void {
  setImmediate(setImmediate, fn);
}

/**
 * A socket over Node handles: counts what it holds of Node's — handles not
 * gone yet, name lookups in flight — and is `released` once the count is
 * back to 0, which wakes its `close` operations and takes it out of the
 * backend's live sockets. Call `hold()` when a handle is made (or a lookup
 * starts), and `release()` when it is gone: in the `'close'` event of a
 * `net.Socket`, and `releaseAfterClose()` after closing a `net.Server` or a
 * `dgram` socket.
 *
 * @example
 * ```ts
 * const stream = new net.Socket();
 * sock.hold();
 * stream.on("close", () => sock.release());
 * ```
 * @throws never
 */
export abstract class NodeSocket<B extends SocketBackend = SocketBackend> extends BackendSocket<B> {
  // Its opening and its closes are in its cold state (made by the first
  // bind, listen, connect or close: an accepted connection has none while
  // open), and what of Node's it holds is counted in the receive queue's
  // field of bits (`ownCount`): no field of their own.

  /**
   * The backend's live sockets, which hold this one while it holds something
   * (null: none) — its `NodeBackend`'s `live`: a getter (or a field of a
   * socket class that wants one), since a field here would cost every
   * connection a word for what is the same for every socket of a backend.
   */
  protected abstract get live(): LiveSockets<NodeSocket> | null;

  /**
   * Begins closing at once: the state `closed`, every waiter woken (they
   * fail with `SocketClosed`), the Node handles on their way out. The
   * contract's `closeNow`, and what `drain` and a domain's `finaliser` call
   * for every socket still live.
   */
  abstract closeNow(): void;

  protected override newColdState(): ColdState {
    return new Waits();
  }

  /** @internal Its opening and closes, if it has a cold state. */
  private get waits(): Waits | null {
    return this.coldIfAny as Waits | null;
  }

  /** The `bindAndListen` or `connect` operation in progress (Node binds, listens and connects in callbacks). */
  get opener(): Parked<unknown> | null {
    return this.waits?.opener ?? null;
  }

  set opener(op: Parked<unknown> | null) {
    if (op !== null || this.waits !== null) (this.cold as Waits).opener = op;
  }

  /** Why the last bind, listen or connect failed, for its operation. */
  get openError(): Error | null {
    return this.waits?.openError ?? null;
  }

  set openError(error: Error | null) {
    if (error !== null || this.waits !== null) (this.cold as Waits).openError = error;
  }

  /** Nothing of Node's is left: no handle, no lookup in flight. */
  get released(): boolean {
    return this.ownCount === 0;
  }

  /** The socket holds one more thing of Node's. */
  hold(): void {
    const holds = this.ownCount;
    this.ownCount = holds + 1;
    if (holds === 0) this.live?.add(this);
  }

  /** One thing it held is gone; once nothing is left, its closes return. */
  release(): void {
    const holds = this.ownCount - 1;
    this.ownCount = holds;
    if (holds !== 0) return;
    this.live?.delete(this);
    this.waits?.closers?.wakeAll();
  }

  /** `close` waits until the socket is released. */
  waitReleased(op: CloseOp): void {
    const waits = this.cold as Waits;
    (waits.closers ??= new WaitQueue()).add(op);
  }

  /** A `close` that waited left (its task was cancelled or interrupted). */
  leaveReleased(op: CloseOp): void {
    this.waits?.closers?.leave(op);
  }

  /** The bind, listen or connect in progress has an outcome (the state says which): its operation attempts again. */
  opened(): void {
    this.opener?.ready();
  }

  /** The bind, listen or connect in progress failed: its operation throws `error`. */
  openFailed(error: Error): void {
    this.openError = error;
    this.opener?.ready();
  }

  /** Releases one hold once the handles closed now are really gone ({@link afterHandleClose}). */
  releaseAfterClose(): void {
    afterHandleClose(() => this.release());
  }

  /**
   * `dns.lookup` in the socket's family, held until it answers (Node
   * cannot cancel one). `callback` runs before the hold is released, so it
   * can hold what it starts first.
   */
  lookup(host: string, callback: (error: Error | null, ip: string) => void): void {
    this.hold();
    dns.lookup(host, { family: this.kind === "tcp6" || this.kind === "udp6" ? 6 : 4 }, (error, ip) => {
      callback(error, ip);
      this.release();
    });
  }
}

/**
 * A {@link NodeSocket}'s cold state: with the receive queue's, what its
 * opening and closing wait on, since a connection that was accepted, not
 * opened, holds none of them while it is open.
 */
class Waits extends ColdState {
  opener: Parked<unknown> | null = null;
  openError: Error | null = null;
  /** The `close` operations waiting for the socket to be released: made by the first that waits. */
  closers: WaitQueue | null = null;
}

/**
 * `bindAndListen` or `connect` of a {@link NodeSocket}: Node binds, listens
 * and connects in callbacks, so the operation starts once (`begin`) and then
 * waits as the socket's `opener` until it is open (`isOpen()`), or until
 * the socket reports a failure (`openFailed`) and holds nothing any more —
 * the failure is thrown then, the socket `fresh` again (`failed` drops what
 * the attempt made). The socket's `opened()` and `openFailed(error)` wake it.
 *
 * @example
 * ```ts
 * connect(sock: Socket, addr: Address) {
 *   const s = sock as MySocket;      // its stream's 'connect': s.state = "connected"; s.opened()
 *   return new OpenOp(s, "connect", () => s.startConnecting(addr), () => s.state === "connected");
 * }
 * ```
 * @throws SocketClosed, the bind's, listen's or connect's error (`EADDRINUSE`, `ECONNREFUSED`…), `Cancelled`, `Timeout`.
 */
export class OpenOp extends Parked<void> {
  #started = false;

  constructor(
    private readonly sock: NodeSocket,
    private readonly name: string,
    private readonly begin: () => void,
    private readonly isOpen: () => boolean,
    private readonly failed: () => void = () => {},
  ) {
    super(name);
  }

  protected attempt(): boolean {
    const s = this.sock;
    if (s.state === "closed") {
      this.#over();
      throw new SocketClosed(`${this.name}()`);
    }
    if (!this.#started) {
      this.#started = true;
      s.opener = this;
      s.openError = null;
      this.begin();
    }
    if (this.isOpen()) {
      this.#over();
      return true;
    }
    const error = s.openError;
    if (error === null || s.state !== "fresh" || !s.released) return false;
    s.openError = null;
    this.#over();
    this.failed();
    throw error;
  }

  protected wait(): void {}

  protected leave(): void {
    this.#over();
  }

  /** The socket has no opening in progress any more (not this one, at least). */
  #over(): void {
    if (this.sock.opener === this) this.sock.opener = null;
  }

  override describe(): string {
    return `${super.describe()} ${this.sock.where()}`;
  }
}

/**
 * `close` of a {@link NodeSocket}: begins closing at once (the backend's
 * `closeNow`: the socket is `closed` and its waiters fail), then waits until
 * the socket is released.
 *
 * @example
 * ```ts
 * close(sock: Socket): B.Operation<void> { return new CloseOp(sock as MySocket); }
 * ```
 * @throws `Cancelled`, `Timeout` while it waits (the socket is closing all the same).
 */
export class CloseOp extends Parked<void> {
  #started = false;

  constructor(private readonly sock: NodeSocket) {
    super("close");
  }

  protected attempt(): boolean {
    if (!this.#started) {
      this.#started = true;
      this.sock.backend.closeNow(this.sock);
    }
    return this.sock.released;
  }

  protected wait(): void {
    this.sock.waitReleased(this);
  }

  protected leave(): void {
    this.sock.leaveReleased(this);
  }

  override describe(): string {
    return `${super.describe()} ${this.sock.where()}`;
  }
}
