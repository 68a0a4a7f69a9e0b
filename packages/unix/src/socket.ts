/**
 * Operations on any socket: `read`, `readExactly`, `write`, `shutdown`,
 * `close`, `getsockname`; and the argument checks every socket operation
 * shares. Bad arguments are `TypeError`/`RangeError` thrown in the calling
 * task; they never reach the backend.
 */
import * as net from "node:net";
import type * as B from "@bobbin/core";
import { describe } from "@bobbin/core/lowlevel";
import { type ChunkLender, concurrentReadChunk, LentChunk } from "./chunk.js";
import type { Address, Chunk, ShutdownCommand, Socket, SocketKind } from "./contract.js";
import { EndOfFile, SocketClosed } from "./errors.js";
import { operationFrom } from "./from-backend.js";
import { isStreamKind } from "./kinds.js";
import { systemError } from "./system-error.js";
import { despiteExpiry } from "./timeout.js";

/** An operation whose result is known at once. */
class Immediate<T> implements B.Operation<T>, Iterator<B.Instruction, T, unknown> {
  constructor(private readonly value: T) {}
  [Symbol.iterator](): this {
    return this;
  }
  next(): IteratorResult<B.Instruction, T> {
    return { done: true, value: this.value };
  }
}

const ZERO = new Immediate(0);
const NOTHING = new Immediate<void>(undefined);

/** @internal Checks that `sock` is a socket. */
export function checkSocket(sock: unknown, what: string): Socket {
  if (
    sock === null ||
    typeof sock !== "object" ||
    typeof (sock as Socket).kind !== "string" ||
    typeof (sock as Socket).backend !== "object" ||
    typeof (sock as Socket).state !== "string"
  ) {
    throw new TypeError(
      `${what} expects a socket made by tcpv4(), tcpv6(), udpv4(), udpv6(), unixSocket() or fromStream(), got ${describe(sock)}`,
    );
  }
  return sock as Socket;
}

/** @internal Checks a stream socket in the `connected` state. */
export function checkConnectedStream(sock: unknown, what: string): Socket {
  const s = checkSocket(sock, what);
  if (!isStreamKind(s.kind)) {
    throw new TypeError(
      `${what} needs a stream socket (tcpv4, tcpv6, unixSocket, fromStream); this one is ${s.kind}: for UDP use recvfrom()/sendto()`,
    );
  }
  // Read once: a backend's `state` is a getter, and this runs at every read and write.
  const state = s.state;
  if (state !== "connected") {
    if (state === "closed") throw new SocketClosed(what);
    throw new TypeError(
      `${what} needs a connected socket: connect(sock, addr) it, or take it from accept(); this one is ${state}` +
        (state === "listening" ? " (a listening socket only accepts)" : ""),
    );
  }
  return s;
}

/**
 * @internal Checks `buf` and `off` for a range of it and returns the offset
 * (0 when `off` is undefined); {@link rangeLength} checks the length. Two
 * checks that return numbers, not one that returns a pair: the pair was an
 * array made at every read and write wherever V8 did not inline the check
 * into its caller (on the native backend's echo, every round trip).
 * @throws TypeError when `buf` is not a Uint8Array.
 * @throws RangeError for a negative `off` or one past the buffer's end.
 */
export function rangeStart(buf: unknown, off: unknown, what: string): number {
  if (!(buf instanceof Uint8Array)) throw new TypeError(`${what} expects a Buffer or Uint8Array, got ${describe(buf)}`);
  const o = off === undefined ? 0 : off;
  if (typeof o !== "number" || !Number.isInteger(o) || o < 0) {
    throw new RangeError(`${what}: off must be an integer ≥ 0, got ${describe(off)}${numberHint(off)}`);
  }
  if (o > buf.length) throw new RangeError(`${what}: off (${o}) is past the end of the buffer (length ${buf.length})`);
  return o;
}

/**
 * @internal Checks `len` for a range of `buf` from `o` (what `rangeStart`
 * returned) and returns it: the rest of the buffer when `len` is undefined.
 * @throws RangeError for a negative `len` or a range past the buffer's end.
 */
export function rangeLength(buf: Uint8Array, o: number, len: unknown, what: string): number {
  const l = len === undefined ? buf.length - o : len;
  if (typeof l !== "number" || !Number.isInteger(l) || l < 0) {
    throw new RangeError(`${what}: len must be an integer ≥ 0, got ${describe(len)}${numberHint(len)}`);
  }
  if (o + l > buf.length) {
    throw new RangeError(`${what}: off + len (${o} + ${l}) exceeds the buffer's length ${buf.length}`);
  }
  return l;
}

/**
 * @internal Checks that `addr` suits a socket of `kind`; `connecting`
 * forbids port 0. Returns the address normalised to `{ host, port }` or `{ path }`.
 */
export function checkAddress(addr: unknown, kind: SocketKind, what: string, connecting: boolean): Address {
  if (addr === null || typeof addr !== "object") {
    throw new TypeError(`${what} expects an address { host, port } or { path }, got ${describe(addr)}`);
  }
  if (kind === "unix") {
    const path = (addr as { path?: unknown }).path;
    if (typeof path !== "string" || path.length === 0) {
      throw new TypeError(`${what}: a Unix socket needs an address { path: "/some/file.sock" }`);
    }
    return { path };
  }
  const { host, port } = addr as { host?: unknown; port?: unknown };
  if (typeof host !== "string" || host.length === 0) {
    throw new TypeError(`${what}: a ${kind} socket needs an address { host: "127.0.0.1", port } (host as a string)`);
  }
  const min = connecting ? 1 : 0;
  if (typeof port !== "number" || !Number.isInteger(port) || port < min || port > 65535) {
    throw new RangeError(`${what}: port must be a number, an integer in [${min}, 65535]; got ${describe(port)}${numberHint(port)}`);
  }
  const family = net.isIP(host);
  const wanted = kind === "tcp6" || kind === "udp6" ? 6 : 4;
  if (family !== 0 && family !== wanted) {
    throw systemError("EAFNOSUPPORT", what.replace(/\(\)$/, ""), `${host} is an IPv${family} address but the socket is ${kind}`);
  }
  return { host, port };
}

/** What to pass instead of a number given as a string ("3000" → 3000). */
function numberHint(value: unknown): string {
  return typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value)) ? `: pass the number ${Number(value)}` : "";
}

/**
 * Reads at most `len` bytes (default: the rest of `buf` from `off`) into
 * `buf[off…]` and returns how many; 0 means the peer ended the stream (or
 * `len` was 0). Waits until at least one byte, the end, or an error arrives.
 *
 * @example
 * ```ts
 * const buf = Buffer.alloc(4096);
 * const n = yield* read(client, buf);
 * if (n === 0) return;                 // end of stream
 * yield* write(client, buf, 0, n);     // echo
 * ```
 * @throws RangeError for a negative or out-of-bounds `off`/`len`.
 * @throws TypeError for a UDP socket, a socket that is not connected, or a `buf` that is not a Uint8Array.
 * @throws SocketClosed when the socket is (or gets) closed.
 * @throws the system error of the connection (`ECONNRESET`…), to this task only.
 */
export function read(sock: Socket, buf: Uint8Array, off?: number, len?: number): B.Operation<number> {
  const s = checkConnectedStream(sock, "read()");
  const o = rangeStart(buf, off, "read()");
  const l = rangeLength(buf, o, len, "read()");
  if (l === 0) return ZERO;
  return operationFrom(s.backend.read(s, buf, o, l), s.backend, "read");
}

/**
 * Reads the next bytes of a stream socket in memory the runtime lends, or
 * returns `null` at the end of the stream. While it waits the task holds
 * no buffer: the bytes land in memory taken once they are there (an arena
 * slot on the native backend, a provided buffer on io_uring, the buffer Node
 * allocated on libuv), so an idle connection costs what its socket costs.
 *
 * The chunk is lent until you `release()` it, call `readChunk` on the socket
 * again, or close the socket — whichever comes first; past that, its `bytes`
 * throw `ChunkMisuse` instead of showing memory that serves another read.
 * One `readChunk` at a time per socket. Cancelled while it waits, it leaves
 * nothing lent and takes no byte: the next read gets them.
 *
 * @example
 * ```ts
 * for (let chunk; (chunk = yield* readChunk(client)) !== null; ) {
 *   yield* write(client, chunk.bytes);   // echo
 *   chunk.release();
 * }
 * ```
 * @throws TypeError for a UDP socket or a socket that is not connected.
 * @throws ChunkMisuse ("concurrent readChunk") when another task's `readChunk` waits on the socket.
 * @throws SocketClosed when the socket is (or gets) closed.
 * @throws the system error of the connection (`ECONNRESET`…), to this task only.
 */
export function readChunk(sock: Socket): B.Operation<Chunk | null> {
  const s = checkConnectedStream(sock, "readChunk()");
  const backend = s.backend;
  return backend.readChunk !== undefined ? operationFrom(backend.readChunk(s), backend, "readChunk") : copiedChunk(s);
}

/** The size of the buffer `readChunk` reads into on a backend that lends nothing. */
const COPY_SIZE = 16 * 1024;

/** On a backend without `readChunk`: each socket's chunk, or null while a `readChunk` waits (absent: neither). */
const copied = new WeakMap<Socket, LentChunk<null> | null>();

/** Forgets a copied chunk once released or taken back. */
const COPIED: ChunkLender<null> = {
  giveBack(sock, chunk) {
    if (copied.get(sock) === chunk) copied.delete(sock);
  },
};

/** `readChunk` on a backend that lends nothing: a fresh buffer, filled by `read`. */
function* copiedChunk(s: Socket): Generator<B.Instruction, Chunk | null, unknown> {
  const held = copied.get(s);
  if (held === null) throw concurrentReadChunk();
  held?.takeBack();
  copied.set(s, null);
  try {
    const buf = Buffer.allocUnsafe(COPY_SIZE);
    const n = yield* operationFrom(s.backend.read(s, buf, 0, COPY_SIZE), s.backend, "read");
    if (n === 0) {
      copied.delete(s);
      return null;
    }
    const chunk = new LentChunk(buf.subarray(0, n), s, COPIED, null);
    copied.set(s, chunk);
    return chunk;
  } catch (error) {
    copied.delete(s);
    throw error;
  }
}

/**
 * Reads exactly `len` bytes (default: the rest of `buf` from `off`) into
 * `buf[off…]` (Miou's `really_read`).
 *
 * @example
 * ```ts
 * const header = Buffer.alloc(4);
 * yield* readExactly(sock, header);
 * const body = Buffer.alloc(header.readUInt32BE(0));
 * yield* readExactly(sock, body);
 * ```
 * @throws EndOfFile when the stream ends first (with how many bytes were read).
 * @throws RangeError, TypeError, SocketClosed, system errors: as {@link read}.
 */
export function readExactly(sock: Socket, buf: Uint8Array, off?: number, len?: number): B.Operation<void> {
  const s = checkConnectedStream(sock, "readExactly()");
  const o = rangeStart(buf, off, "readExactly()");
  const l = rangeLength(buf, o, len, "readExactly()");
  if (l === 0) return NOTHING;
  return readLoop(s, buf, o, l);
}

function* readLoop(s: Socket, buf: Uint8Array, off: number, len: number): Generator<B.Instruction, void, unknown> {
  let got = 0;
  while (got < len) {
    const n = yield* operationFrom(s.backend.read(s, buf, off + got, len - got), s.backend, "read");
    if (n === 0) throw new EndOfFile(got, len);
    got += n;
  }
}

/**
 * Writes all of `buf[off, off + len)` (default: all of `buf` from `off`);
 * a string is written as UTF-8. Returns once every byte was handed to the
 * system, so `buf` may be reused at once.
 *
 * @example
 * ```ts
 * yield* write(sock, "hello\n");
 * yield* write(sock, buf, 0, n);
 * ```
 * @throws RangeError for a negative or out-of-bounds `off`/`len`.
 * @throws TypeError for a UDP socket, a socket that is not connected, or a `buf` that is neither bytes nor a string.
 * @throws SocketClosed when the socket is (or gets) closed.
 * @throws the system error (`EPIPE` once the peer is gone, `ECONNRESET`…), to this task only.
 */
export function write(sock: Socket, buf: Uint8Array | string, off?: number, len?: number): B.Operation<void> {
  const s = checkConnectedStream(sock, "write()");
  const bytes = typeof buf === "string" ? Buffer.from(buf, "utf8") : buf;
  const o = rangeStart(bytes, off, "write()");
  const l = rangeLength(bytes, o, len, "write()");
  if (l === 0) return NOTHING;
  return operationFrom(s.backend.write(s, bytes, o, l), s.backend, "write");
}

/**
 * Shuts down one direction of a connection, or both (Miou's `shutdown`):
 * `"send"` ends the stream for the peer once pending bytes are sent,
 * `"receive"` makes later reads return 0. Never suspends.
 *
 * @example
 * ```ts
 * yield* write(sock, request);
 * shutdown(sock, "send");             // the peer reads 0 after the request
 * const n = yield* read(sock, buf);   // the reply still arrives
 * ```
 * @throws TypeError for a UDP socket or an unknown command.
 * @throws SocketClosed when the socket is closed.
 * @throws Error with code `ENOTCONN` when the socket is not connected.
 */
export function shutdown(sock: Socket, how: ShutdownCommand = "both"): void {
  const s = checkSocket(sock, "shutdown()");
  if (how !== "send" && how !== "receive" && how !== "both") {
    throw new TypeError(`shutdown(sock, how): how must be "send", "receive" or "both", got ${describe(how)}`);
  }
  if (!isStreamKind(s.kind)) throw new TypeError(`shutdown() needs a stream socket; this one is ${s.kind}`);
  if (s.state === "closed") throw new SocketClosed("shutdown()");
  if (s.state !== "connected") throw systemError("ENOTCONN", "shutdown", `the socket is ${s.state}, not connected`);
  s.backend.shutdown(s, how);
}

/**
 * Closes the socket: at once no operation can use it (waiters fail with
 * `SocketClosed`), and `close` returns when the system handle is gone.
 * Closing a closed socket waits for the same and is not an error. Works in a
 * `finally` block of a cancelled task, and in a `withTimeout` scope whose
 * deadline passed: close is not where a timeout shows (as in Miou, where it
 * is a plain system call), so it closes and returns, and the scope's
 * `Timeout` comes from the next operation that can wait. A deadline that
 * passes while close waits for the handle to go interrupts that wait with
 * `Timeout`, the socket closed already.
 *
 * @example
 * ```ts
 * const sock = tcpv4();
 * try {
 *   yield* connect(sock, { host: "127.0.0.1", port });
 * } finally {
 *   yield* close(sock);
 * }
 * ```
 * @throws TypeError when `sock` is not a socket.
 */
export function close(sock: Socket): B.Operation<void> {
  const s = checkSocket(sock, "close()");
  return despiteExpiry(operationFrom(s.backend.close(s), s.backend, "close"));
}

/**
 * The address a socket is bound to (Unix's `getsockname`): after
 * `bindAndListen(sock, { host, port: 0 })` it tells the port the system chose.
 * Also exported as `localAddress`.
 *
 * @example
 * ```ts
 * yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
 * const { port } = getsockname(server) as InetAddress;
 * ```
 * @throws TypeError when the socket is not bound or connected.
 * @throws SocketClosed when it is closed.
 */
export function getsockname(sock: Socket): Address {
  const s = checkSocket(sock, "getsockname()");
  if (s.state === "closed") throw new SocketClosed("getsockname()");
  if (s.state === "fresh" || s.state === "connecting") {
    throw new TypeError(`getsockname() needs a bound, listening or connected socket; this one is ${s.state}`);
  }
  return s.backend.localAddress(s);
}
