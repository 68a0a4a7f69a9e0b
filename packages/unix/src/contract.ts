/**
 * The backend contract: what `run` needs from an I/O backend (core's `Events`
 * contract plus sockets and timers). `@bobbin/unix` validates every argument
 * and socket state before calling a backend, so a backend only receives
 * well-formed requests (see the README, "How to write a backend").
 */
import type { Operation } from "@bobbin/core";
import type { Events } from "@bobbin/core/lowlevel";

/**
 * Bytes `readChunk` returned, lent by the runtime until you `release()` the
 * chunk, read the socket again with `readChunk`, or close the socket.
 *
 * @example
 * ```ts
 * const chunk = yield* readChunk(sock);
 * if (chunk !== null) {
 *   yield* write(sock, chunk.bytes);
 *   chunk.release();
 * }
 * ```
 * @throws ChunkMisuse from `bytes` and `length` once the chunk went back, from `release()` when released twice.
 */
export interface Chunk {
  /** The bytes (at least one). A view of lent memory: copy what you keep beyond the loan. */
  readonly bytes: Uint8Array;
  /** How many bytes: `bytes.length`. */
  readonly length: number;
  /** Gives the memory back now. A chunk the runtime took back already (next `readChunk`, close) is not released twice. */
  release(): void;
}

/**
 * The kinds of sockets: TCP over IPv4/IPv6, UDP over IPv4/IPv6, Unix stream
 * sockets (the five a backend makes), and `"stream"`, a Node stream adapted
 * by `fromStream` (a connected stream socket that no backend makes).
 *
 * @example
 * ```ts
 * const kind: SocketKind = tcpv4().kind;   // "tcp4"
 * ```
 */
export type SocketKind = "tcp4" | "tcp6" | "udp4" | "udp6" | "unix" | "stream";

/**
 * Where a socket stands. `@bobbin/unix` checks it before every operation;
 * the backend moves it along:
 * `fresh` → `listening` (TCP/Unix after `bindAndListen`), `bound` (UDP after
 * `bindAndListen` or a first `sendto`), `connecting` → `connected`, and
 * `closed` from any state.
 *
 * @example
 * ```ts
 * if (sock.state === "connected") yield* write(sock, data);
 * ```
 */
export type SocketState = "fresh" | "listening" | "bound" | "connecting" | "connected" | "closed";

/**
 * An IPv4/IPv6 address as Node writes it.
 *
 * @example
 * ```ts
 * const addr: InetAddress = { host: "127.0.0.1", port: 8080 };
 * ```
 */
export interface InetAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * A Unix-domain socket path.
 *
 * @example
 * ```ts
 * const addr: UnixAddress = { path: "/tmp/app.sock" };
 * ```
 */
export interface UnixAddress {
  readonly path: string;
}

/**
 * A socket address, as Node writes them: `{ host, port }` or `{ path }`.
 *
 * @example
 * ```ts
 * const where: Address = "path" in a ? a : { host: a.host, port: a.port };
 * ```
 */
export type Address = InetAddress | UnixAddress;

/**
 * Options of `bindAndListen`.
 *
 * @example
 * ```ts
 * yield* bindAndListen(server, { host: "127.0.0.1", port: 0 }, { backlog: 128, reuseAddr: true });
 * ```
 */
export interface ListenOptions {
  /**
   * Length of the kernel's queue of connections not yet accepted (TCP/Unix):
   * an integer from 0 to 2^31 − 1, which the system clamps to its own limit
   * (Linux: `net.core.somaxconn`). Default 511, as Node.
   */
  readonly backlog?: number | undefined;
  /** Allow binding an address in TIME_WAIT or shared (UDP `SO_REUSEADDR`). Default `true`. */
  readonly reuseAddr?: boolean | undefined;
}

/**
 * What a backend's `bindAndListen` receives: the caller's {@link ListenOptions},
 * checked, with every default filled in. (`Required<ListenOptions>` is not
 * this under `exactOptionalPropertyTypes`: it keeps each option's `undefined`.)
 *
 * @example
 * ```ts
 * bindAndListen(sock: Socket, addr: Address, { backlog, reuseAddr }: ListenSettings): B.Operation<void> {
 *   return this.listenOn(sock, addr, backlog, reuseAddr);   // a number and a boolean
 * }
 * ```
 */
export interface ListenSettings {
  /** The listen(2) backlog: an integer from 0 to 2^31 − 1 (511 when the caller gave none). */
  readonly backlog: number;
  /** Whether to allow binding an address in TIME_WAIT or shared (`true` when the caller gave none). */
  readonly reuseAddr: boolean;
}

/**
 * Which half of a connection `shutdown` closes (Miou's `SHUTDOWN_SEND`, `SHUTDOWN_RECEIVE`, `SHUTDOWN_ALL`).
 *
 * @example
 * ```ts
 * shutdown(sock, "send");
 * ```
 */
export type ShutdownCommand = "send" | "receive" | "both";

/**
 * A socket, as made by a backend (or by `fromStream` over a Node stream).
 * Opaque to users: pass it to the operations of `@bobbin/unix`. A socket
 * carries what its operations go to, so they reach it without a lookup.
 *
 * A socket is `Disposable`: `[Symbol.dispose]()` begins closing it without
 * waiting (as an ownership finaliser does), so `using s = tcpv4()` closes it
 * on every way out of the block: return, throw, cancellation.
 *
 * @example
 * ```ts
 * using sock = tcpv4();
 * sock.kind;    // "tcp4"
 * sock.state;   // "fresh"
 * ```
 */
export interface Socket extends Disposable {
  /** What the socket is. */
  readonly kind: SocketKind;
  /** Where it stands; `closed` as soon as `close` (or a finaliser, or its disposal) began closing it. */
  readonly state: SocketState;
  /** What its operations go to: the backend that made it, or the adapter of `fromStream`. */
  readonly backend: SocketBackend;
}

/**
 * A deadline registered with {@link Backend.deadline}: a callback at an
 * absolute time that can be cancelled.
 *
 * @example
 * ```ts
 * const d = backend.deadline(performance.now() + 1000, () => console.log("1 s"));
 * d.cancel();
 * ```
 */
export interface DeadlineHandle {
  /** Forgets the deadline; cancelling twice, or after it fired, does nothing. */
  cancel(): void;
}

/**
 * The socket half of a backend: the operations `@bobbin/unix` calls with a
 * socket it has checked. A {@link Backend} implements them for its sockets;
 * so does the adapter of `fromStream` for sockets over Node streams.
 *
 * The methods receive arguments `@bobbin/unix` has already checked:
 * the socket was made by this backend and is in a state the operation
 * accepts (a `read` gets a `connected` stream socket, `accept` a `listening`
 * one, `recvfrom` a `bound` UDP socket…), `0 ≤ off ≤ off + len ≤ buf.length`,
 * addresses match the socket's kind. They report system failures by throwing
 * Node-style errors (with `code`) from the operation, to the calling task
 * only.
 *
 * Operations that park must be cancellable: an error thrown into them
 * through `yield*` (`Cancelled`, or the `Timeout` of a `withTimeout` deadline)
 * must leave nothing registered; and they should call `checkTimeouts()` when
 * they start. The `Parked` base class does both.
 *
 * @example
 * ```ts
 * const n = yield* sock.backend.read(sock, buf, 0, buf.length);   // what read(sock, buf) does once it checked
 * ```
 */
export interface SocketBackend {
  /** A short name for messages and benchmark tables, e.g. `"libuv"`. */
  readonly name: string;

  /** Binds (and for stream sockets listens): `fresh` → `listening` (TCP/Unix) or `bound` (UDP). */
  bindAndListen(sock: Socket, addr: Address, options: ListenSettings): Operation<void>;
  /** Waits for a connection on a `listening` socket; the client is `connected`. */
  accept(sock: Socket): Operation<[Socket, Address]>;
  /** Connects a `fresh` stream socket: `connecting`, then `connected` (or back to `fresh`… the backend may also leave it `closed` on failure). */
  connect(sock: Socket, addr: Address): Operation<void>;
  /** Reads at most `len > 0` bytes into `buf[off…]`; 0 means end of stream. */
  read(sock: Socket, buf: Uint8Array, off: number, len: number): Operation<number>;
  /**
   * Optional: the next bytes of a `connected` stream socket in memory the
   * backend lends (`readChunk`), or `null` at the end of the stream. The
   * operation parks holding no buffer. The socket lends one chunk at a time:
   * take the previous one back (`LentChunk.takeBack`) when this starts and
   * when the socket closes; throw `ChunkMisuse` ("concurrent readChunk")
   * when a `readChunk` is in progress on the socket; a cancelled one leaves
   * nothing lent and no byte taken. Without it, `readChunk` reads into a
   * fresh buffer with `read`.
   */
  readChunk?(sock: Socket): Operation<Chunk | null>;
  /** Writes all of `buf[off, off + len)` (`len > 0`); returns once the bytes are handed to the system and `buf` may be reused. */
  write(sock: Socket, buf: Uint8Array, off: number, len: number): Operation<void>;
  /**
   * Optional: takes all of `buf[off, off + len)` for a `connected` stream
   * socket at once, as a `write` would without waiting — no write in
   * progress or queued on the socket, room for every byte — and returns
   * true; otherwise takes nothing and returns false (then `write` them:
   * an error of the socket is thrown there). `buf` may be reused once it
   * returns. Never suspends, and may be called outside a task (a Node
   * callback), where no `select` may follow: the bytes must go out all the
   * same. `toStream`'s writes use it to call their callback at once.
   */
  tryWrite?(sock: Socket, buf: Uint8Array, off: number, len: number): boolean;
  /** Receives one datagram (truncated to `len`) on a `bound` UDP socket. */
  recvfrom(sock: Socket, buf: Uint8Array, off: number, len: number): Operation<[number, Address]>;
  /** Sends one datagram; a `fresh` UDP socket becomes `bound`. Returns the bytes sent. */
  sendto(sock: Socket, buf: Uint8Array, off: number, len: number, addr: Address): Operation<number>;
  /** Shuts down one or both directions of a `connected` stream socket. Never suspends. */
  shutdown(sock: Socket, how: ShutdownCommand): void;
  /** Closes the socket (state `closed` at once, waking its waiters with `SocketClosed`) and waits until the system handle is gone. Closing a closed socket waits for the same. */
  close(sock: Socket): Operation<void>;
  /** Begins closing the socket without waiting (for finalisers and `Symbol.dispose`, which cannot suspend). */
  closeNow(sock: Socket): void;
  /** The address the socket is bound to (`getsockname`). */
  localAddress(sock: Socket): Address;

  /**
   * Optional, for `B.call`/`B.parallel`: describes a `listening` stream
   * socket of this backend so that another domain can adopt it (see
   * `SharedSocket` and `ShareGuard`; seal the guard before closing the
   * descriptor). `@bobbin/unix` checks the socket's kind and state first.
   */
  share?(sock: Socket): SharedSocket;
}

/**
 * An I/O backend: core's `Events` (`select`, `interrupt`, `finaliser`) plus
 * sockets ({@link SocketBackend}) and timers. Its sockets implement
 * `Symbol.dispose` as `closeNow`.
 *
 * One instance serves one domain. Define the factory with `defineBackend`
 * so that worker domains make theirs; implement `share` and `adopt` so that
 * listening sockets can cross domains.
 *
 * @example
 * ```ts
 * export const myBackend = defineBackend(import.meta.url, "mine", () => new MyBackend());
 * await run(main, { backend: myBackend });
 * ```
 */
export interface Backend extends Events, SocketBackend {
  /** A new, unbound socket (Miou's `tcpv4 ()`…), of one of the five kinds a backend makes (never `"stream"`). Never suspends. */
  socket(kind: SocketKind): Socket;

  /** The backend's clock, in milliseconds (`performance.now()` for a real-time backend). */
  now(): number;
  /** Parks the calling task for `ms` milliseconds of the backend's clock (≥ 0; `Infinity` is forever). */
  sleep(ms: number): Operation<void>;
  /** Calls `fire` once the backend's clock reaches `at`, from the backend's loop; `withTimeout` uses it. */
  deadline(at: number, fire: () => void): DeadlineHandle;

  /**
   * After the run: closes the sockets still open and settles once every
   * system handle of the backend (sockets, timers) is gone.
   */
  drain(): Promise<void>;

  /**
   * Optional, for `B.call`/`B.parallel`: makes in this domain a `listening`
   * socket of this backend over the OS socket `shared` describes (pin its
   * guard while duplicating the descriptor; a sealed guard makes a socket
   * that is already `closed`). Never suspends; closing the socket closes
   * only this domain's descriptor.
   */
  adopt?(shared: SharedSocket): Socket;

  /**
   * Optional, for `pipe` and `spawnProcess`: a connected pair of Unix stream
   * socket descriptors, non-blocking and close-on-exec (`socketpair(2)`).
   * Without it, `pipe` connects a pair through a Unix listener of this
   * backend, and a child's stdio are Node's pipes (sockets over Node
   * streams, as `fromStream` makes).
   * @throws a Node-style system error (`EMFILE`…).
   */
  socketPair?(): [number, number];

  /**
   * With `socketPair`: a `connected` stream socket of this backend over an
   * end of a pair it made (the other end may have gone to a child process).
   * The socket owns the descriptor: closing it closes the descriptor; when
   * adopting fails, the descriptor is closed before the error is thrown.
   * Never suspends.
   */
  adoptStream?(fd: number): Socket;

  /**
   * Optional: what this backend's programs reach instead of Node's own
   * system services (a simulated world's network, its lack of descriptors).
   * Absent: Node's (its `fetch` reaches the peers, descriptors and processes
   * are the system's).
   */
  readonly services?: HostServices;
}

/**
 * A backend's own system services ({@link Backend.services}): each member
 * present replaces what Node gives. `@bobbin/sim` says that its network is
 * reached through its sockets only and that its hosts have no descriptors
 * or processes.
 *
 * @example
 * ```ts
 * readonly services: HostServices = {
 *   network: "sockets",
 *   descriptors: "a simulated host has no file descriptors or processes: …",
 * };
 * ```
 */
export interface HostServices {
  /** `"sockets"`: Node's own network clients (its `fetch`) cannot reach this backend's peers, so HTTP clients go over its sockets; `"node"` (the default): they can. */
  readonly network?: "node" | "sockets";
  /** Set when the backend has no file descriptors or processes: why, and what to do instead (the message of the `Unsupported` error `ofFd`, `pipe` and `spawnProcess` throw). */
  readonly descriptors?: string;
}

/**
 * What crosses domains for a listening socket: made by `Backend.share` in
 * the sending domain, given to `Backend.adopt` in the receiving one. Every
 * field is cloneable; `guard` is shared memory (a `ShareGuard`'s buffer,
 * from `@bobbin/unix/backend`).
 *
 * @example
 * ```ts
 * share(sock: Socket): SharedSocket {
 *   const s = sock as MySocket;
 *   return describeListener(s, s.fd, this.localAddress(s), s.backlog);
 * }
 * ```
 */
export interface SharedSocket {
  /** A stream kind: `"tcp4"`, `"tcp6"` or `"unix"`. */
  readonly kind: SocketKind;
  /** The listening socket's file descriptor in the process, valid while `guard` can be pinned. */
  readonly fd: number;
  /** The address it listens on (what `getsockname` says in the receiving domain). */
  readonly address: Address;
  /** The backlog it was listening with (a backend that calls `listen(2)` again keeps it). */
  readonly backlog: number;
  /** The buffer of the sending socket's `ShareGuard`. */
  readonly guard: SharedArrayBuffer;
}
