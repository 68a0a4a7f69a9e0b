/**
 * `read` and `write` on a connected stream socket, as Miou_unix writes them:
 * try the operation; when it would block (`EAGAIN`), park on the socket
 * until `select` says it is readable (writable), and try again.
 */
import type * as B from "@bobbin/core";
import { SocketClosed } from "@bobbin/unix";
import { checkTimeouts, systemError } from "@bobbin/unix/backend";
import type { PollSocket } from "./socket.js";

/** What `tryRead` returns when nothing is there yet: the `EAGAIN` of a non-blocking read. */
const AGAIN = -1;

/**
 * Copies up to `len` buffered bytes into `buf[off…]`: how many, 0 at the end
 * of the stream, or {@link AGAIN}.
 * @throws SocketClosed, or the stream's error once its bytes are read.
 */
function tryRead(sock: PollSocket, buf: Uint8Array, off: number, len: number): number {
  if (sock.closed) throw new SocketClosed("read()");
  if (sock.receiveShut) return 0;
  const stream = sock.stream!;
  const buffered = stream.readableLength;
  if (buffered !== 0) {
    // Never more than asked: the rest stays in the stream's buffer, which
    // bounds what Node reads ahead from the system.
    const chunk = stream.read(Math.min(len, buffered)) as Buffer;
    buf.set(chunk, off);
    return chunk.length;
  }
  if (sock.eof) return 0;
  if (sock.error !== null) throw sock.error;
  if (stream.destroyed) return 0;
  // Nothing buffered: this asks Node to read on (and, at the end of the
  // stream, to emit 'end'); the socket is touched when something comes.
  stream.read(0);
  return AGAIN;
}

/**
 * `read(sock, buf, off, len)`: at least one byte, 0 at the end of the stream.
 *
 * @example
 * ```ts
 * const n = yield* read(sock, buf, 0, buf.length);   // what PollBackend.read returns
 * ```
 * @throws SocketClosed, the stream's error (`ECONNRESET`…), `Timeout`, `Cancelled`.
 */
export function* read(sock: PollSocket, buf: Uint8Array, off: number, len: number): Generator<B.Instruction, number, unknown> {
  checkTimeouts();
  for (;;) {
    const n = tryRead(sock, buf, off, len);
    if (n !== AGAIN) return n;
    yield* sock.poller.wait(sock, "readable", "read");
  }
}

/** One write handed to Node: its callback's outcome. */
interface WriteRequest {
  done: boolean;
  error: Error | null;
}

/**
 * `write(sock, buf, off, len)`: hands the bytes to Node and returns once
 * they are handed to the system, so that `buf` may be reused: at once when
 * libuv wrote them synchronously (the usual case), otherwise when the
 * write's callback came. A socket is `writable` when no write handed to
 * Node waits for its callback (its send buffer is empty).
 *
 * @example
 * ```ts
 * yield* write(sock, buf, 0, n);
 * ```
 * @throws SocketClosed, `EPIPE` after `shutdown(sock, "send")`, the stream's error, `Timeout`, `Cancelled`.
 */
export function* write(sock: PollSocket, buf: Uint8Array, off: number, len: number): Generator<B.Instruction, void, unknown> {
  checkTimeouts();
  if (sock.closed) throw new SocketClosed("write()");
  if (sock.error !== null) throw sock.error;
  if (sock.sendShut) throw systemError("EPIPE", "write", "the socket was shut down for sending");
  const stream = sock.stream!;
  if (stream.destroyed) throw systemError("EPIPE", "write", "the connection is closed");
  const request: WriteRequest = { done: false, error: null };
  stream.write(off === 0 && len === buf.length ? buf : buf.subarray(off, off + len), (error?: Error | null) => {
    request.done = true;
    request.error = error ?? null;
    sock.acknowledged();
  });
  sock.unacknowledged++; // counted once handed over (the callback always comes later)
  if (stream.writableLength === 0) {
    // Written synchronously, or failed synchronously (EPIPE, ECONNRESET).
    if (stream.errored) throw stream.errored;
    return;
  }
  for (;;) {
    yield* sock.poller.wait(sock, "writable", "write");
    if (sock.closed) throw new SocketClosed("write()");
    if (request.done) {
      if (request.error !== null) throw request.error;
      return;
    }
    // The connection failed, or its handle is gone: this callback may never come.
    if (sock.error !== null || sock.released)
      throw sock.error ?? systemError("EPIPE", "write", "the connection closed with the bytes unsent");
  }
}
