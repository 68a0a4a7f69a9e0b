/**
 * A socket over a Node stream (what `fromStream` makes): the stream, and the
 * operations parked on it (`ops.ts`), woken by the stream's events. Each
 * event wakes every waiter of its kind, and each tries again in its own
 * fiber (edge-triggered, as in the backends: a cancelled waiter leaves
 * nothing behind and loses nothing). Nothing here depends on the run's
 * backend.
 */
import type { Readable, Writable } from "node:stream";
import { NodeSocket } from "../backend/node-socket.js";
import { type NodeWriter, NodeWrites } from "../backend/node-writes.js";
import type { ShutdownCommand, SocketBackend } from "../contract.js";
import { SocketClosed } from "../errors.js";
import { systemError } from "../system-error.js";

/**
 * What `fromStream` adapts: a Node `Readable`, `Writable` or `Duplex` (a
 * `net.Socket`, a `tls.TLSSocket`, child process stdio, `fs` streams, HTTP
 * bodies and responses).
 *
 * @example
 * ```ts
 * const s: NodeStream = child.stdout;
 * ```
 */
export type NodeStream = Readable | Writable;

/** The members of a Node stream the socket uses: each side's are there only when it has that side. */
type AnyStream = Readable &
  Writable & {
    /** Set once the stream was destroyed and emitted 'close' (Node ≥ 18; `undefined` on legacy streams). */
    readonly closed?: boolean;
    /** A Duplex's: whether its writable side outlives the end of its readable side. */
    allowHalfOpen?: boolean;
  };

/** The stream ended without its end: destroyed by its owner, or by a peer that left without one. */
function prematureClose(syscall: string): NodeJS.ErrnoException {
  const error = new Error(`${syscall}(): the Node stream was destroyed before its end`) as NodeJS.ErrnoException;
  error.code = "ERR_STREAM_PREMATURE_CLOSE";
  error.syscall = syscall;
  return error;
}

/** @internal A socket over a Node stream: it holds the stream until the stream emitted `'close'`. */
export class StreamSocket extends NodeSocket implements NodeWriter {
  readonly writes = new NodeWrites();
  #sendShut = false;
  #receiveShut = false;
  readonly #stream: AnyStream;
  readonly #onReadable = (): void => this.wakeReaders();
  /** Keeps the stream's errors away from the process: they are the operations' (see `take`, `write`). */
  readonly #onError = (): void => {
    this.wakeReaders();
    this.writes.writers.wakeAll();
  };
  readonly #onClose = (): void => {
    this.#detach();
    const stream = this.#stream;
    this.writes.abandon(stream.errored ?? systemError("EPIPE", "write", "the Node stream closed before the bytes were written"));
    this.wakeReaders();
    this.release();
  };

  /** In no backend's live sockets: the stream's owner closes it. */
  protected override get live(): null {
    return null;
  }

  constructor(
    stream: NodeStream,
    /** The stream has a readable side (`read`). */
    readonly readableSide: boolean,
    /** The stream has a writable side (`write`, `end`). */
    readonly writableSide: boolean,
    backend: SocketBackend,
  ) {
    super("stream", backend);
    this.state = "connected";
    this.#stream = stream as AnyStream;
    if (this.#stream.closed === true) return;
    this.hold();
    // Half-open, as sockets are: the peer's end does not end this side (a
    // Duplex made with allowHalfOpen: false would end it once read to its end).
    if (readableSide && writableSide) this.#stream.allowHalfOpen = true;
    if (readableSide) {
      // A 'readable' listener puts the stream in paused mode: the socket reads it.
      stream.on("readable", this.#onReadable);
      stream.on("end", this.#onReadable);
    }
    stream.on("error", this.#onError);
    stream.on("close", this.#onClose);
  }

  /** "stream TLSSocket 127.0.0.1:3000 ← 127.0.0.1:51234", or "stream Socket" for a pipe (a dump). */
  override where(): string {
    const { localAddress, localPort, remoteAddress, remotePort } = this.#stream as unknown as Partial<Record<string, unknown>>;
    const kind = `stream ${this.#stream.constructor?.name || "(anonymous)"}`;
    if (typeof remoteAddress !== "string") return kind;
    return `${kind} ${String(localAddress)}:${String(localPort)} ← ${remoteAddress}:${String(remotePort)}`;
  }

  #detach(): void {
    const stream = this.#stream;
    if (this.readableSide) {
      stream.off("readable", this.#onReadable);
      stream.off("end", this.#onReadable);
    }
    stream.off("error", this.#onError);
    stream.off("close", this.#onClose);
  }

  /**
   * Copies up to `len > 0` bytes the stream has buffered into `buf[off…]`.
   * Returns how many, 0 at the end of the stream, or -1 when nothing is
   * there yet.
   * @throws SocketClosed, the stream's error, or `ERR_STREAM_PREMATURE_CLOSE`.
   */
  take(buf: Uint8Array, off: number, len: number): number {
    if (this.state === "closed") throw new SocketClosed("read()");
    if (this.#receiveShut) return 0;
    const stream = this.#stream;
    // Never more than wanted: what a task has not taken stays in the stream,
    // whose 'end' comes once it is all taken.
    const buffered = stream.readableLength;
    const chunk = stream.read(buffered === 0 ? undefined : Math.min(len, buffered)) as unknown;
    if (chunk !== null) {
      if (!(chunk instanceof Uint8Array)) {
        throw new TypeError("read(): the Node stream gave text, not bytes: setEncoding() was called on it after fromStream()");
      }
      if (chunk.length > len) stream.unshift(chunk.subarray(len));
      const n = Math.min(len, chunk.length);
      buf.set(n === chunk.length ? chunk : chunk.subarray(0, n), off);
      return n;
    }
    if (stream.readableEnded) return 0;
    if (stream.errored) throw stream.errored;
    if (this.released || stream.destroyed) throw prematureClose("read");
    return -1;
  }

  /** The stream's error, if it failed: a failed write says it rather than what its callback got after. */
  streamError(): Error | null {
    return this.#stream.errored;
  }

  /**
   * A write's stream.
   * @throws SocketClosed, `EPIPE` after `shutdown` or once the stream ended, the stream's error.
   */
  writable(): Writable {
    if (this.state === "closed") throw new SocketClosed("write()");
    if (this.#sendShut) throw systemError("EPIPE", "write", "the socket was shut down for sending");
    const stream = this.#stream;
    if (stream.errored) throw stream.errored;
    if (stream.writableEnded) throw systemError("EPIPE", "write", "the Node stream has ended (end() was called on it)");
    if (stream.destroyed) throw systemError("EPIPE", "write", "the Node stream is destroyed");
    return stream;
  }

  /** `shutdown`: `"send"` ends the writable side (`end()`); `"receive"` makes reads return 0. */
  shutdown(how: ShutdownCommand): void {
    const stream = this.#stream;
    if (how !== "receive" && !this.#sendShut) {
      this.#sendShut = true;
      if (this.writableSide && !stream.writableEnded && !stream.destroyed) stream.end();
    }
    if (how !== "send" && !this.#receiveShut) {
      this.#receiveShut = true;
      this.wakeReaders();
    }
  }

  /** Begins closing: state `closed`, every waiter woken (they fail with `SocketClosed`), the stream destroyed. */
  closeNow(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.wakeReaders();
    this.writes.close();
    if (!this.released) this.#stream.destroy();
  }

  /** The stream itself, for `getsockname`. */
  get nodeStream(): NodeStream {
    return this.#stream;
  }
}
