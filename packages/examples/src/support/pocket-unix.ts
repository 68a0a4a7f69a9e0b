/**
 * A pocket `Unix` module for chapters 2 and 4: file descriptors, `accept`,
 * `read`, `write`, `close` and `select`, made over `node:net`.
 *
 * Node gives a program no blocking socket call and no `select(2)`: its
 * sockets are non-blocking, watched by libuv, and their readiness reaches
 * JavaScript as events on Node's loop. This module turns those events back
 * into what the book's code expects of the system: a table of descriptors,
 * each "ready for reading" (a connection is pending, bytes or the end of the
 * stream have arrived) or "ready for writing" (Node's write buffer is below
 * its high-water mark), and a `select` that reports which are ready, waiting
 * at most `timeout` seconds for one to become so. That wait needs Node's loop,
 * so `select` returns a Promise; `accept`, `read` and `write` are synchronous
 * and never block (they fail with `EAGAIN` when they would).
 *
 * Chapter 2's blocking calls are {@link blocking}: `select` on one descriptor
 * without a timeout, then the call, which is exactly what a blocking system
 * call does. Only what the two chapters use is here: TCP over IPv4.
 */
import { createServer, type Server, type Socket } from "node:net";

/** A file descriptor of this pocket system: an index in its table. */
export type FileDescr = number;

/** An IPv4 socket address (the book's `ADDR_INET`). */
export interface Sockaddr {
  readonly host: string;
  readonly port: number;
}

interface Listening {
  readonly kind: "listening";
  readonly server: Server;
  readonly address: Sockaddr;
  /** Connections the system accepted that `accept` has not returned yet (the backlog). */
  readonly pending: Socket[];
}

interface Connected {
  readonly kind: "connected";
  readonly socket: Socket;
  /** Bytes received and not read yet. */
  readonly chunks: Buffer[];
  buffered: number;
  /** The peer ended the stream (reads return 0 once `chunks` is empty). */
  eof: boolean;
  error: Error | null;
}

type Entry = Listening | Connected;

/** Past this many unread bytes, the socket stops reading from the system until they are read. */
const READ_HIGH_WATER = 64 * 1024;

const table = new Map<FileDescr, Entry>();
let nextFd: FileDescr = 3;
/** Wake the pending `select`s: some descriptor may have become ready. */
const selects = new Set<() => void>();

function changed(): void {
  for (const wake of selects) wake();
}

function systemError(code: string, call: string, fd: FileDescr): Error {
  return Object.assign(new Error(`${call}(${fd}): ${code}`), { code, syscall: call });
}

function entry(fd: FileDescr, call: string): Entry {
  const e = table.get(fd);
  if (e === undefined) throw systemError("EBADF", call, fd);
  return e;
}

function connected(fd: FileDescr, call: string): Connected {
  const e = entry(fd, call);
  if (e.kind !== "connected") throw systemError("ENOTCONN", call, fd);
  return e;
}

function register(socket: Socket): FileDescr {
  const e: Connected = { kind: "connected", socket, chunks: [], buffered: 0, eof: false, error: null };
  socket.on("data", (chunk: Buffer) => {
    e.chunks.push(chunk);
    e.buffered += chunk.length;
    if (e.buffered >= READ_HIGH_WATER) socket.pause();
    changed();
  });
  socket.on("end", () => {
    e.eof = true;
    changed();
  });
  socket.on("error", (error) => {
    e.error = error;
    changed();
  });
  socket.on("drain", changed);
  socket.resume();
  const fd = nextFd++;
  table.set(fd, e);
  return fd;
}

/**
 * `socket`, `bind` and `listen` in one: a TCP socket listening on `addr`
 * (port 0: the system chooses). Node binds asynchronously (it resolves the
 * host on its loop first), so this is the one call that returns a Promise,
 * settled once the socket listens.
 *
 * @example
 * ```ts
 * const socket = await listen({ host: "127.0.0.1", port: 3000 }, 64);
 * ```
 * @throws (rejects with) the system's error, e.g. `EADDRINUSE`.
 */
export function listen(addr: Sockaddr, backlog = 64): Promise<FileDescr> {
  return new Promise((resolve, reject) => {
    // allowHalfOpen: a peer that ends its side (`nc -q0`) still gets its echo,
    // as with a real socket, until the program closes the descriptor.
    const server = createServer({ pauseOnConnect: true, allowHalfOpen: true });
    server.once("error", reject);
    server.listen({ host: addr.host, port: addr.port, backlog }, () => {
      server.off("error", reject);
      const bound = server.address();
      if (bound === null || typeof bound === "string") return reject(new TypeError("listen: not a TCP address"));
      const e: Listening = { kind: "listening", server, address: { host: bound.address, port: bound.port }, pending: [] };
      server.on("connection", (socket: Socket) => {
        e.pending.push(socket);
        changed();
      });
      const fd = nextFd++;
      table.set(fd, e);
      resolve(fd);
    });
  });
}

/**
 * The address a descriptor is bound to (`getsockname`).
 *
 * @example
 * ```ts
 * const { port } = getsockname(socket);
 * ```
 * @throws EBADF for an unknown descriptor.
 */
export function getsockname(fd: FileDescr): Sockaddr {
  const e = entry(fd, "getsockname");
  if (e.kind === "listening") return e.address;
  return { host: e.socket.localAddress ?? "", port: e.socket.localPort ?? 0 };
}

/**
 * Takes a pending connection: its new descriptor and the peer's address.
 * Call it when `select` says the listening descriptor is ready for reading.
 *
 * @example
 * ```ts
 * const [client, peer] = accept(socket);
 * ```
 * @throws EAGAIN when no connection is pending (this pocket system never blocks).
 */
export function accept(fd: FileDescr): [FileDescr, Sockaddr] {
  const e = entry(fd, "accept");
  if (e.kind !== "listening") throw systemError("EINVAL", "accept", fd);
  const socket = e.pending.shift();
  if (socket === undefined) throw systemError("EAGAIN", "accept", fd);
  return [register(socket), { host: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 }];
}

/**
 * Reads at most `len` bytes into `buf[off…]`: how many, or 0 at the end of
 * the stream. Call it when `select` says the descriptor is ready for reading.
 *
 * @example
 * ```ts
 * const n = read(client, buf, 0, buf.length);
 * ```
 * @throws EAGAIN when nothing has arrived yet; the socket's error if it failed.
 */
export function read(fd: FileDescr, buf: Uint8Array, off: number, len: number): number {
  const e = connected(fd, "read");
  if (e.chunks.length === 0) {
    if (e.error !== null) throw e.error;
    if (e.eof) return 0;
    throw systemError("EAGAIN", "read", fd);
  }
  let n = 0;
  while (n < len && e.chunks.length > 0) {
    const chunk = e.chunks[0]!;
    const k = Math.min(len - n, chunk.length);
    buf.set(chunk.subarray(0, k), off + n);
    n += k;
    if (k === chunk.length) e.chunks.shift();
    else e.chunks[0] = chunk.subarray(k);
  }
  e.buffered -= n;
  if (e.buffered < READ_HIGH_WATER && e.socket.isPaused() && !e.eof) e.socket.resume();
  return n;
}

/**
 * Writes `buf[off, off + len)`: hands a copy to the system and returns `len`.
 * Call it when `select` says the descriptor is ready for writing.
 *
 * @example
 * ```ts
 * write(client, buf, 0, n);
 * ```
 * @throws EPIPE when the socket is closed; the socket's error if it failed.
 */
export function write(fd: FileDescr, buf: Uint8Array, off: number, len: number): number {
  const e = connected(fd, "write");
  if (e.error !== null) throw e.error;
  if (e.socket.destroyed || e.socket.writableEnded) throw systemError("EPIPE", "write", fd);
  e.socket.write(Buffer.from(buf.subarray(off, off + len)));
  return len;
}

/**
 * Closes a descriptor. A connection's unsent bytes are still sent (as the
 * kernel does after `close(2)`); a listening socket stops listening and the
 * connections it had not handed out are closed.
 *
 * @example
 * ```ts
 * close(client);
 * ```
 * @throws EBADF for an unknown descriptor.
 */
export function close(fd: FileDescr): void {
  const e = entry(fd, "close");
  table.delete(fd);
  if (e.kind === "listening") {
    for (const socket of e.pending) socket.destroy();
    e.server.close();
  } else {
    e.socket.destroySoon();
  }
}

function readable(fd: FileDescr): boolean {
  const e = table.get(fd);
  if (e === undefined) return true; // select on a closed descriptor: let the call report EBADF
  return e.kind === "listening" ? e.pending.length > 0 : e.chunks.length > 0 || e.eof || e.error !== null;
}

function writable(fd: FileDescr): boolean {
  const e = table.get(fd);
  if (e === undefined || e.kind === "listening") return true;
  return e.error !== null || e.socket.destroyed || !e.socket.writableNeedDrain;
}

/**
 * The book's `Unix.select rds wrs [] timeout`: the descriptors of `rds`
 * ready for reading and those of `wrs` ready for writing, waiting at most
 * `timeout` seconds for at least one (`timeout < 0`: no limit).
 *
 * @example
 * ```ts
 * const [rds] = await select([socket], [], [], 0.01);
 * if (rds.length > 0) accept(socket);
 * ```
 */
export async function select(
  rds: readonly FileDescr[],
  wrs: readonly FileDescr[],
  _exceptional: readonly FileDescr[],
  timeout: number,
): Promise<[FileDescr[], FileDescr[], FileDescr[]]> {
  const ready = (): [FileDescr[], FileDescr[], FileDescr[]] => [rds.filter(readable), wrs.filter(writable), []];
  let now = ready();
  if (now[0].length > 0 || now[1].length > 0 || timeout === 0) return now;
  const deadline = performance.now() + timeout * 1000;
  for (;;) {
    let wake: () => void = () => undefined;
    const woken = await new Promise<boolean>((resolve) => {
      const timer = timeout < 0 ? undefined : setTimeout(() => resolve(false), Math.max(0, deadline - performance.now()));
      wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      selects.add(wake);
    });
    selects.delete(wake);
    now = ready();
    // Woken for another descriptor than ours: wait on (a real select would not have returned).
    if (!woken || now[0].length > 0 || now[1].length > 0) return now;
  }
}

/**
 * How many descriptors are open: to check that a program closed everything.
 *
 * @example
 * ```ts
 * openDescriptors();   // 0 once every socket is closed
 * ```
 */
export function openDescriptors(): number {
  return table.size;
}

/**
 * Blocking versions of `accept`, `read` and `write` (chapter 2): each waits,
 * with `select` and no timeout, until the call can be made, then makes it.
 * The `await` in front of them is where a program blocks: nothing else of it
 * runs until the call returns.
 *
 * @example
 * ```ts
 * const [client] = await blocking.accept(socket);
 * const len = await blocking.read(client, buf, 0, buf.length);
 * ```
 */
export const blocking = {
  /** `Unix.accept`: waits for a connection. */
  async accept(fd: FileDescr): Promise<[FileDescr, Sockaddr]> {
    await select([fd], [], [], -1);
    return accept(fd);
  },
  /** `Unix.read`: waits for bytes or the end of the stream. */
  async read(fd: FileDescr, buf: Uint8Array, off: number, len: number): Promise<number> {
    await select([fd], [], [], -1);
    return read(fd, buf, off, len);
  },
  /** `Unix.write`: waits until the socket accepts bytes. */
  async write(fd: FileDescr, buf: Uint8Array, off: number, len: number): Promise<number> {
    await select([], [fd], [], -1);
    return write(fd, buf, off, len);
  },
};
