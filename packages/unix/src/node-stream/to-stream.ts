/**
 * `toStream`: a Bobbin stream socket — of any backend, the simulator's too —
 * as a Node `Duplex`, so that Node's `http` and `tls` run over it. The
 * reverse of `fromStream`.
 *
 * A task pumps it, built on the socket operations every backend has: it reads
 * the socket when the stream's consumer asks for bytes (`_read`) and pushes
 * what came until the stream's buffer is full (back-pressure towards the
 * peer), and a child of it writes what the stream's producer wrote, calling
 * each write's callback once the bytes were handed to the system
 * (back-pressure towards the producer). Node callbacks only record what they
 * ask and wake the pump: the socket is only ever touched by its tasks —
 * except a write the backend takes whole at once (its `tryWrite`, on the
 * native and io_uring backends): that one is handed over, and its callback
 * called, right in `_write`, without the writer task.
 *
 * Per chunk, nothing is allocated that Node does not keep: the reads land in
 * an arena shared by many reads, whose pieces are pushed as they are, a write's chunks
 * (strings included: Node's `http` writes its heads as strings) are joined
 * into a pooled buffer (`outgoing.ts`), and the tasks wait on bells rung
 * again and again.
 */
import type { AddressInfo } from "node:net";
import * as net from "node:net";
import { Duplex } from "node:stream";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { describe } from "@bobbin/core/lowlevel";
import { currentTaskFor, isRegisteredBackend } from "../context.js";
import type { Address, Backend, DeadlineHandle, Socket } from "../contract.js";
import { SocketClosed } from "../errors.js";
import { checkConnectedStream, close, getsockname, read, shutdown, write } from "../socket.js";
import { Bell } from "./bell.js";
import { type Chunk, Outgoing } from "./outgoing.js";

/**
 * Options of {@link toStream}.
 *
 * @example
 * ```ts
 * const [client, peer] = yield* accept(server);
 * const stream = toStream(client, { peer, orphans: connections });
 * ```
 */
export interface ToStreamOptions {
  /** The peer's address (what `accept` returned), for `remoteAddress`, `remotePort` and `remoteFamily`. */
  readonly peer?: Address | undefined;
  /** Put the pumping task in this collector (`B.orphans()`) rather than leaving it a plain child of the caller. */
  readonly orphans?: B.Orphans<void> | undefined;
}

/**
 * A Node `Duplex` over a Bobbin stream socket, made by {@link toStream}, with
 * what Node's `http` server and `tls` need of a `net.Socket`.
 *
 * @example
 * ```ts
 * const stream: SocketStream = toStream(client, { peer });
 * stream.remoteAddress;   // "127.0.0.1"
 * ```
 */
export interface SocketStream extends Duplex {
  /** The socket it owns: do not use it while the stream is open (the pump reads it). */
  readonly socket: Socket;
  /** The task that pumps it, a child of the task that called `toStream`: it ends once the stream has closed. */
  readonly task: B.Task<void>;
  /** The peer's host (`options.peer`), as `net.Socket`'s. */
  readonly remoteAddress: string | undefined;
  /** The peer's port (`options.peer`). */
  readonly remotePort: number | undefined;
  /** `"IPv4"` or `"IPv6"` for a peer with an IP address. */
  readonly remoteFamily: string | undefined;
  /** The socket's own host (`getsockname`), while it is open. */
  readonly localAddress: string | undefined;
  /** The socket's own port (`getsockname`), while it is open. */
  readonly localPort: number | undefined;
  /** The socket's own address as `net.Socket.address()` gives it (`{}` once closed, or for a Unix socket). */
  address(): AddressInfo | Record<string, never>;
  /** Does nothing (Bobbin's sockets send at once: the backends set `TCP_NODELAY` where it applies). */
  setNoDelay(noDelay?: boolean): this;
  /** Does nothing (keep-alive probes are the backend's matter). */
  setKeepAlive(enable?: boolean, initialDelay?: number): this;
  /**
   * Emits `'timeout'` once the stream has been idle (nothing read or written)
   * for `ms` milliseconds of the backend's clock (virtual under `@bobbin/sim`);
   * 0 disables it. `callback` is added as a `'timeout'` listener.
   */
  setTimeout(ms: number, callback?: () => void): this;
  /** Does nothing: the pumping task keeps the run alive while the stream is open. */
  ref(): this;
  /** Does nothing (see `ref`). */
  unref(): this;
  /** Ends the writable side, then destroys the stream once everything written was sent (as `net.Socket`'s). */
  destroySoon(): void;
}

/** The size of a stream's read arena: each read's bytes are pushed as a piece of it, without a copy. */
const ARENA_SIZE = 64 * 1024;
/** A read asks for the rest of the arena when it has this much at least; else for a new arena. */
const MIN_READ = 16 * 1024;

/** Sockets that have a stream already: one stream per socket. */
const streamed = new WeakSet<Socket>();

/** @internal The stream `toStream` makes. */
class SocketDuplex extends Duplex implements SocketStream {
  task!: B.Task<void>;
  /** The consumer wants bytes (`_read` was called, and every push since was taken). */
  wanted = false;
  /** The write waiting for the writer task, one at a time (Node waits for each callback). */
  readonly outgoing = new Outgoing();
  /** Its callback, which tells Node the bytes were sent. */
  private written: ((error?: Error | null) => void) | null = null;
  /** `_final` ran: the writer has nothing more to do. */
  ended = false;
  /** The pump has run: it will close the socket and complete `_destroy`. */
  started = false;
  /** Where the pump waits for the consumer, then for the stream's end. */
  readonly reading = new Bell();
  /** Where the writer waits for the next write. */
  readonly writing = new Bell();
  /** `_destroy`'s callback, called by the pump once the socket's handle is gone. */
  private destroyed_: ((error: Error | null) => void) | null = null;
  private destroyError: Error | null = null;
  private idleMs = 0;
  /** When the idle timer fires, if armed. */
  private armedAt = 0;
  private lastActive = 0;
  private idleTimer: DeadlineHandle | ReturnType<typeof setTimeout> | null = null;

  constructor(
    readonly socket: Socket,
    private readonly peer: Address | undefined,
    /** The run's backend, for the idle timer's clock; null outside a run of `@bobbin/unix` (Node's timers then). */
    private readonly clock: Backend | null,
  ) {
    // Strings come as they are (Node's http writes its heads as strings): they are encoded once, where they are joined.
    super({ allowHalfOpen: true, decodeStrings: false });
  }

  // -- what Node calls ---------------------------------------------------------------

  override _read(): void {
    this.wanted = true;
    this.reading.ring();
  }

  override _write(chunk: Uint8Array | string, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.outgoing.one(chunk, encoding);
    this.send(callback);
  }

  override _writev(chunks: Chunk[], callback: (error?: Error | null) => void): void {
    this.outgoing.many(chunks);
    this.send(callback);
  }

  /**
   * Sends what `outgoing` holds: at once, with the callback called before it
   * returns (as a `net.Socket`'s write that the kernel took at once), when
   * the backend can take every byte without waiting (`tryWrite`); else
   * through the writer task, which waits for the socket.
   */
  private send(callback: (error?: Error | null) => void): void {
    const { outgoing, socket } = this;
    outgoing.join();
    const backend = socket.backend;
    if (outgoing.pieces === null && backend.tryWrite !== undefined && backend.tryWrite(socket, outgoing.buf!, 0, outgoing.len)) {
      this.touch();
      outgoing.clear(true);
      callback();
      return;
    }
    this.written = callback;
    this.writing.ring();
  }

  override _final(callback: (error?: Error | null) => void): void {
    try {
      shutdown(this.socket, "send");
    } catch (error) {
      callback(error as Error);
      return;
    }
    this.ended = true;
    this.writing.ring();
    callback();
  }

  override _destroy(error: Error | null, callback: (error: Error | null) => void): void {
    this.disarm();
    if (this.socket.state !== "closed") this.socket[Symbol.dispose]();
    this.destroyError = error;
    this.destroyed_ = callback;
    this.reading.ring();
    this.writing.ring();
  }

  // -- what the pump calls -----------------------------------------------------------------

  /** Waits until the consumer wants bytes, or the stream is destroyed. */
  *waitForReader(): Generator<B.Instruction, void, unknown> {
    while (!this.wanted && !this.destroyed) yield* this.reading;
  }

  /** Waits until there is a write to do (true), or the stream has ended or is destroyed (false). */
  *nextWrite(): Generator<B.Instruction, boolean, unknown> {
    while (this.written === null && !this.ended && !this.destroyed) yield* this.writing;
    return this.written !== null;
  }

  /** The write is over: its callback tells Node (with its error, if it failed). */
  wrote(failure: Error | null, sent: boolean): void {
    const callback = this.written!;
    this.written = null;
    this.outgoing.clear(sent);
    callback(failure);
  }

  /** Waits until the stream is destroyed (by its user, or by Node once both sides are done). */
  *waitForDestroy(): Generator<B.Instruction, void, unknown> {
    while (!this.destroyed) yield* this.reading;
  }

  /** The pump is over and the socket's handle gone: `_destroy` completes ('close' follows). */
  settle(): void {
    const callback = this.destroyed_;
    this.destroyed_ = null;
    callback?.(this.destroyError);
  }

  // -- net.Socket's members ----------------------------------------------------------------

  get remoteAddress(): string | undefined {
    return this.peer !== undefined && "host" in this.peer ? this.peer.host : undefined;
  }

  get remotePort(): number | undefined {
    return this.peer !== undefined && "host" in this.peer ? this.peer.port : undefined;
  }

  get remoteFamily(): string | undefined {
    const family = this.remoteAddress === undefined ? 0 : net.isIP(this.remoteAddress);
    return family === 0 ? undefined : `IPv${family}`;
  }

  private local(): Address | undefined {
    try {
      return getsockname(this.socket);
    } catch {
      return undefined; // closed
    }
  }

  get localAddress(): string | undefined {
    const local = this.local();
    return local !== undefined && "host" in local ? local.host : undefined;
  }

  get localPort(): number | undefined {
    const local = this.local();
    return local !== undefined && "host" in local ? local.port : undefined;
  }

  address(): AddressInfo | Record<string, never> {
    const local = this.local();
    if (local === undefined || !("host" in local)) return {};
    return { address: local.host, family: `IPv${net.isIP(local.host) || 4}`, port: local.port };
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  destroySoon(): void {
    if (this.writable) this.end();
    if (this.writableFinished) this.destroy();
    else this.once("finish", () => this.destroy());
  }

  setTimeout(ms: number, callback?: () => void): this {
    if (typeof ms !== "number" || !(ms >= 0)) throw new RangeError(`setTimeout(ms): ms must be a number ≥ 0, got ${describe(ms)}`);
    if (callback !== undefined) {
      if (ms === 0) this.removeListener("timeout", callback);
      else this.once("timeout", callback);
    }
    // Node's http sets it at every request and response: an armed timer is kept while it is
    // not late for the new due time (it fires, then looks at what is due then).
    this.idleMs = ms;
    if (ms === 0 || this.destroyed) return this;
    this.lastActive = this.now();
    const due = this.lastActive + ms;
    if (this.idleTimer !== null && this.armedAt <= due) return this;
    this.disarm();
    this.arm(due);
    return this;
  }

  /** Bytes moved: the idle timer starts again. */
  touch(): void {
    if (this.idleMs !== 0) this.lastActive = this.now();
  }

  private now(): number {
    return this.clock === null ? performance.now() : this.clock.now();
  }

  private arm(at: number): void {
    this.armedAt = at;
    const clock = this.clock;
    if (clock !== null) this.idleTimer = clock.deadline(at, this.onIdle);
    else this.idleTimer = setTimeout(this.onIdle, Math.max(0, at - performance.now()));
  }

  private disarm(): void {
    const timer = this.idleTimer;
    if (timer === null) return;
    this.idleTimer = null;
    if (typeof (timer as DeadlineHandle).cancel === "function") (timer as DeadlineHandle).cancel();
    else clearTimeout(timer as ReturnType<typeof setTimeout>);
  }

  private readonly onIdle = (): void => {
    this.idleTimer = null;
    if (this.idleMs === 0 || this.destroyed) return;
    const due = this.lastActive + this.idleMs;
    if (this.now() < due) this.arm(due);
    else this.emit("timeout");
  };
}

/**
 * Reads the socket into the stream while its consumer wants bytes; returns
 * at the end of the stream, or once it is destroyed. Each read's bytes are
 * pushed as a piece of an arena, without a copy, and the consumer may keep
 * them (a `'data'` listener that collects chunks): so a read never lands on
 * bytes pushed before — the reads fill the arena one after another, and a
 * full arena is left to whoever keeps its pieces while a new one is taken.
 */
function* readInto(stream: SocketDuplex): Generator<B.Instruction, void, unknown> {
  let arena = Buffer.allocUnsafeSlow(ARENA_SIZE);
  let used = 0;
  for (;;) {
    yield* stream.waitForReader();
    if (stream.destroyed) return;
    if (ARENA_SIZE - used < MIN_READ) {
      arena = Buffer.allocUnsafeSlow(ARENA_SIZE);
      used = 0;
    }
    let n: number;
    try {
      n = yield* read(stream.socket, arena, used, ARENA_SIZE - used);
    } catch (error) {
      if (error instanceof SocketClosed && stream.destroyed) return;
      throw error;
    }
    if (stream.destroyed) return;
    if (n === 0) {
      stream.push(null);
      return;
    }
    stream.touch();
    const piece = arena.subarray(used, used + n);
    used += n;
    // push may run the consumer at once (a 'data' listener: Node's HTTP parser), which may destroy the stream.
    stream.wanted = stream.push(piece);
  }
}

/** Writes what the stream's producer wrote, one write at a time, until the stream has ended or is destroyed. */
function* writeFrom(stream: SocketDuplex): Generator<B.Instruction, void, unknown> {
  const { socket, outgoing } = stream;
  while (yield* stream.nextWrite()) {
    try {
      if (outgoing.pieces === null) yield* write(socket, outgoing.buf!, 0, outgoing.len);
      else for (const piece of outgoing.pieces) yield* write(socket, piece);
      stream.touch();
    } catch (error) {
      // Cancelled: the pump destroys the stream; any other error is the stream's (Node destroys it with it).
      stream.wrote(error instanceof B.Cancelled ? null : (error as Error), false);
      throw error;
    }
    stream.wrote(null, true);
  }
}

/** The task behind a stream: reads (and, in a child, writes) until the stream is destroyed, then closes the socket. */
function* pump(stream: SocketDuplex): Generator<B.Instruction, void, unknown> {
  stream.started = true;
  const writer = B.spawn({ name: "toStream writer" }, writeFrom, stream);
  let failure: Error | null = null;
  try {
    yield* readInto(stream);
    yield* stream.waitForDestroy();
  } catch (error) {
    if (!(error instanceof B.Cancelled)) failure = error as Error;
  }
  try {
    // The stream's error, if the socket failed; the end of it, if the task was cancelled.
    stream.destroy(failure ?? undefined);
    yield* close(stream.socket);
    if (writer.status === "pending") {
      // Still waiting: cancelled (a socket closed under it may not wake it: a crashed simulated host's does not).
      yield* B.cancel(writer);
    } else {
      const written = yield* B.awaitTask(writer);
      // The writer's own errors went to the stream (its write callbacks): only a fault of its own is left.
      if (!written.ok && !isStreamFailure(written.error)) throw written.error;
    }
  } finally {
    stream.settle();
  }
}

/** Whether the writer's error is one the stream was told about (a write's error, or the writer's cancellation). */
function isStreamFailure(error: unknown): boolean {
  return error instanceof B.Cancelled || error instanceof SocketClosed || (error instanceof Error && "code" in error);
}

/**
 * A Node `stream.Duplex` over a connected Bobbin stream socket, of any
 * backend (libuv, epoll, io_uring, `@bobbin/sim`'s, or `fromStream`'s), so
 * that Node's own `http` and `tls` run over it: hand it to an `http.Server`
 * with `server.emit("connection", stream)`, or to `tls.connect({ socket:
 * stream })`. It has what those ask of a `net.Socket`: `remoteAddress`,
 * `remotePort`, `remoteFamily` (from `options.peer`), `localAddress`,
 * `localPort`, `address()`, `setTimeout` (on the backend's clock),
 * `destroySoon`, and `setNoDelay`, `setKeepAlive`, `ref`, `unref`, which do
 * nothing.
 *
 * - **Who owns what.** The stream owns the socket: destroying it closes the
 *   socket; do not use the socket yourself meanwhile. A task pumps it — a
 *   child of the calling task (or of its `orphans` collector), given as
 *   `stream.task` — which ends once the stream has closed: await it (or put
 *   it in orphans) before the caller returns; cancelling it, or the caller,
 *   destroys the stream and closes the socket. The stream's `'close'` comes
 *   once the socket's handle is gone.
 * - **Back-pressure both ways.** The socket is read only while the stream's
 *   consumer wants bytes (its buffer below `readableHighWaterMark`), so a
 *   slow consumer holds the peer back; a write's callback comes once the
 *   socket took its bytes, so a slow peer holds the producer back.
 * - **Half-close.** The peer's end of stream ends the readable side (`'end'`)
 *   and leaves the writable side open (`allowHalfOpen`); `end()` shuts the
 *   socket down for sending (`shutdown(sock, "send")`) once everything written
 *   was sent.
 * - **Errors.** A failure of the socket (`ECONNRESET`, `EPIPE`…) destroys
 *   the stream with it: its `'error'` event, as a `net.Socket`'s.
 *
 * @example
 * ```ts
 * import * as http from "node:http";
 * import * as B from "@bobbin/core";
 * import { accept, bindAndListen, getsockname, type InetAddress, run, tcpv4, toStream } from "@bobbin/unix";
 *
 * await run(function* () {
 *   const server = http.createServer((req, res) => res.end(`hello ${req.socket.remoteAddress}\n`));
 *   const listener = tcpv4();
 *   yield* bindAndListen(listener, { host: "127.0.0.1", port: 0 });
 *   const { port } = getsockname(listener) as InetAddress;
 *   const reply = B.spawn(function* () {
 *     return yield* B.promise(() => fetch(`http://127.0.0.1:${port}/`).then((r) => r.text()));
 *   });
 *   const [client, peer] = yield* accept(listener);
 *   const stream = toStream(client, { peer });
 *   server.emit("connection", stream);         // Node's HTTP server, over this socket
 *   console.log(yield* B.awaitExn(reply));     // hello 127.0.0.1
 *   stream.destroy();
 *   yield* B.awaitExn(stream.task);            // the socket is closed
 * });
 * ```
 * @throws TypeError when `socket` is not a connected stream socket, already has a stream, or outside a task.
 * @throws SocketClosed when it is closed.
 */
export function toStream(socket: Socket, options: ToStreamOptions = {}): SocketStream {
  const sock = checkConnectedStream(socket, "toStream()");
  if (options === null || typeof options !== "object")
    throw new TypeError(`toStream(socket, options) expects options { peer, orphans }, got ${describe(options)}`);
  if (streamed.has(sock))
    throw new TypeError("toStream(socket): this socket has a stream already (toStream was called on it before): use that stream");
  currentTaskFor("toStream()");
  const events = L.currentEvents();
  const stream = new SocketDuplex(sock, options.peer, isRegisteredBackend(events) ? events : null);
  const spawnOptions = options.orphans === undefined ? { name: "toStream" } : { name: "toStream", orphans: options.orphans };
  const task = B.spawn(spawnOptions, pump, stream);
  stream.task = task;
  streamed.add(sock);
  // As a net.Socket does: read ahead (up to the high-water mark) before anyone reads, and so see the peer's end or reset.
  stream.read(0);
  // A pump cancelled before its first step never runs: the stream and its socket are closed here instead.
  B.abortSignal(task).addEventListener("abort", () => unborn(stream), { once: true });
  return stream;
}

function unborn(stream: SocketDuplex): void {
  if (stream.started) return;
  stream.destroy();
  stream.settle();
}
