/**
 * A connected stream socket of the libuv backend: a `net.Socket`, the
 * chunks its `'data'` events delivered and no read took yet (edge-triggered:
 * a callback queues what arrived and wakes the first reader, which takes it
 * in its own fiber, so a cancelled reader loses nothing), and the writes
 * Node has not called back yet.
 */
import type * as net from "node:net";
import type { Writable } from "node:stream";
import type { NodeSocket } from "../backend/node-socket.js";
import { type NodeWriter, NodeWrites } from "../backend/node-writes.js";
import { ReceiveQueue } from "../backend/receive-queue.js";
import type { ShutdownCommand } from "../contract.js";
import { SocketClosed } from "../errors.js";
import { systemError } from "../system-error.js";

/** Queued bytes above which a stream stops reading from the system (resumed at half of it). */
export const HIGH_WATER = 64 * 1024;

/** Where a Node socket's listeners find its connection. */
const OWNER = Symbol("bobbin.stream");

type OwnedStream = net.Socket & { [OWNER]: UvStream };

function onData(this: OwnedStream, chunk: Buffer): void {
  this[OWNER].push(chunk);
}

function onEnd(this: OwnedStream): void {
  this[OWNER].end();
}

/**
 * Node's own `'end'` listener of a `net.Socket` (one function for every
 * socket, found on the first one; null if there was not exactly one). A
 * stream takes its place with {@link onEndAfterNode}, which calls it first,
 * as Node would have: a socket with two `'end'` listeners holds an array of
 * them, which every idle connection would pay for.
 */
let nodeEnd: ((this: net.Socket) => void) | null | undefined;

function onEndAfterNode(this: OwnedStream): void {
  nodeEnd!.call(this);
  this[OWNER].end();
}

/** Listens for the end of `stream`'s input, in Node's own listener's place when it can. */
function listenForEnd(stream: net.Socket): void {
  if (nodeEnd === undefined) {
    const listeners = stream.listeners("end");
    nodeEnd = listeners.length === 1 ? (listeners[0] as (this: net.Socket) => void) : null;
  }
  if (nodeEnd !== null && stream.listenerCount("end") === 1) {
    stream.removeListener("end", nodeEnd);
    if (stream.listenerCount("end") === 0) {
      stream.on("end", onEndAfterNode);
      return;
    }
  }
  stream.on("end", onEnd);
}

function onError(this: OwnedStream, error: Error): void {
  this[OWNER].failed(error);
}

function onClose(this: OwnedStream): void {
  this[OWNER].gone();
}

/** @internal The connection of a stream socket. */
export class UvStream extends ReceiveQueue implements NodeWriter {
  /**
   * The writes Node has not called back yet, the write operation kept for
   * reuse and whether the stream was shut down for sending: made at the
   * first write or shutdown (an idle connection holds none).
   */
  #writes: NodeWrites | null = null;

  constructor(
    private readonly sock: NodeSocket,
    /** The Node socket, accepted, or connecting. */
    readonly stream: net.Socket,
  ) {
    super(HIGH_WATER);
    sock.hold();
    // The listeners are shared by every stream (they find theirs through the
    // Node socket): a connection holds no closure of its own.
    (stream as OwnedStream)[OWNER] = this;
    stream.on("data", onData);
    listenForEnd(stream);
    stream.on("error", onError);
    stream.on("close", onClose);
  }

  /** Node's `'error'`: a failed connect's, or the connection's. */
  failed(error: Error): void {
    const sock = this.sock;
    if (sock.state === "connecting") sock.openError = error;
    else this.fail(error);
  }

  /** Node's `'close'`: the handle is gone. */
  gone(): void {
    const sock = this.sock;
    if (sock.state === "connecting") {
      // A failed connect: the socket is fresh again, once its handle is gone.
      sock.state = "fresh";
      sock.opened();
    }
    this.#writes?.abandon(this.error ?? new Error("the socket closed with writes pending"));
    this.readers.wakeAll();
    sock.release();
  }

  /** "127.0.0.1:3000 ← 127.0.0.1:51234" (a dump). */
  describe(): string {
    const stream = this.stream;
    if (this.sock.kind === "unix") return "(unbound)";
    const local = stream.localAddress === undefined ? "(unbound)" : `${stream.localAddress}:${stream.localPort}`;
    const peer = stream.remoteAddress === undefined ? "(connecting)" : `${stream.remoteAddress}:${stream.remotePort}`;
    return `${local} ← ${peer}`;
  }

  get writes(): NodeWrites {
    this.#writes ??= new NodeWrites();
    return this.#writes;
  }

  /** A write's stream. @throws SocketClosed, the stream's error, `EPIPE` after `shutdown` or once the connection is gone. */
  writable(): Writable {
    if (this.sock.state === "closed") throw new SocketClosed("write()");
    if (this.error !== null) throw this.error;
    if (this.#writes?.sendShut === true) throw systemError("EPIPE", "write", "the socket was shut down for sending");
    if (this.stream.destroyed) throw systemError("EPIPE", "write", "the connection is closed");
    return this.stream;
  }

  /** Reading starts (a connection accepted with `pauseOnConnect` is read once a task accepts it). */
  start(): void {
    this.stream.resume();
  }

  protected override pause(): void {
    this.stream.pause();
  }

  protected override resume(): void {
    this.stream.resume();
  }

  shutdown(how: ShutdownCommand): void {
    if (how !== "receive" && !this.writes.sendShut) {
      this.writes.sendShut = true;
      if (!this.stream.destroyed) this.stream.end();
    }
    if (how !== "send" && !this.receiveShut) this.shutdownReceive();
  }

  /** The socket closes: its reads and writes fail, the connection is destroyed. */
  closeNow(): void {
    this.close();
    this.#writes?.close();
    if (!this.stream.destroyed) this.stream.destroy();
  }
}
