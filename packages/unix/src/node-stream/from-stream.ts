/**
 * `fromStream`: a Node stream as a Bobbin socket, so that what Node gives as
 * streams — TLS connections, HTTP bodies, child process stdio, files — is
 * read and written from fibers with `read`, `readExactly`, `write`,
 * `shutdown` and `close`.
 */

import { describe } from "@bobbin/core/lowlevel";
import type { Socket } from "../contract.js";
import { nodeStreams } from "./backend.js";
import { type NodeStream, StreamSocket } from "./socket.js";

/** Streams that are a socket already: one socket per stream. */
const adapted = new WeakSet<object>();

/**
 * A socket over a Node `Readable`, `Writable` or `Duplex` (a `net.Socket`,
 * `tls.TLSSocket`, `child.stdout`/`child.stdin`, `fs.createReadStream(…)`,
 * an HTTP request or response…). It is `connected` from the start, of kind
 * `"stream"`, and takes the operations of any stream socket, with the same
 * meanings and errors as a backend's:
 *
 * - `read` returns what the stream has (at least one byte), **0 at its end**;
 *   the socket reads the stream in paused mode (`'readable'`/`read()`), so
 *   the stream's own buffer bounds what is read ahead;
 * - `write` returns once the stream took the bytes (its write callback came,
 *   or it took them at once), so `buf` may be reused and a slow consumer
 *   holds the writer back;
 * - `shutdown(sock, "send")` ends the writable side (`end()`), `"receive"`
 *   makes reads return 0;
 * - `close` destroys the stream and returns once it emitted `'close'`;
 *   operations waiting on the socket fail with `SocketClosed`; `using` or
 *   `OwnedSockets` close it too.
 *
 * The stream's errors (`'error'`) become the error of the operation that
 * meets them, never the process's; a stream destroyed without an error
 * before its end makes `read` throw `ERR_STREAM_PREMATURE_CLOSE`. Every
 * wait is cancellable and obeys `withTimeout`. No backend is involved: the
 * socket works under any run, in the domain whose thread made the stream.
 * `run` does not close it at its end: close it (or `using` it).
 *
 * @example
 * ```ts
 * const child = spawn("ls", ["-l"], { stdio: ["ignore", "pipe", "inherit"] });
 * using out = fromStream(child.stdout);
 * const buf = Buffer.alloc(4096);
 * for (let n; (n = yield* read(out, buf)) > 0; ) process.stdout.write(buf.subarray(0, n));
 * ```
 * @throws TypeError when `stream` is not a Node stream, is in object mode or
 * decodes text (`setEncoding`), or is already a socket (adapt a stream once).
 */
export function fromStream(stream: NodeStream): Socket {
  const s = stream as unknown as Record<string, unknown> | null;
  if (s === null || typeof s !== "object" || typeof s.on !== "function" || typeof s.destroy !== "function") {
    throw new TypeError(`fromStream(stream) expects a Node Readable, Writable or Duplex, got ${describe(stream)}`);
  }
  const readable = typeof s.read === "function";
  const writable = typeof s.write === "function" && typeof s.end === "function";
  if (!readable && !writable) {
    throw new TypeError(`fromStream(stream): ${describe(stream)} is neither readable (read()) nor writable (write(), end())`);
  }
  if (s.readableObjectMode === true || s.writableObjectMode === true) {
    throw new TypeError("fromStream(stream): the stream is in object mode; a socket carries bytes: adapt a byte stream");
  }
  if (typeof s.readableEncoding === "string") {
    throw new TypeError(
      `fromStream(stream): the stream decodes its bytes as ${s.readableEncoding} (setEncoding); a socket carries bytes: adapt it before setting an encoding`,
    );
  }
  if (adapted.has(stream)) {
    throw new TypeError("fromStream(stream): this stream is a socket already (fromStream was called on it before): use that socket");
  }
  adapted.add(stream);
  return new StreamSocket(stream, readable, writable, nodeStreams);
}
