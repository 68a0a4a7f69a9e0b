/**
 * Descriptors as sockets: `ofFd(fd)` (Miou_unix's `of_file_descr`) and
 * `pipe()`. A descriptor given by the program goes through Node's handle
 * for it (`net.Socket`, `tty.ReadStream`), which libuv makes non-blocking,
 * and becomes a socket as `fromStream` makes them; the pairs a backend makes
 * itself (`socketPair`) become its own sockets (`adoptStream`).
 */
import { closeSync, fstatSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tty from "node:tty";
import type * as B from "@bobbin/core";
import { describe } from "@bobbin/core/lowlevel";
import { currentBackend } from "./context.js";
import type { Backend, Socket } from "./contract.js";
import { Unsupported } from "./errors.js";
import { fromStream } from "./node-stream/from-stream.js";
import { close } from "./socket.js";
import { systemError } from "./system-error.js";
import { accept, bindAndListen, connect } from "./tcp.js";

/** @internal The backend of the calling task, which must have descriptors. @throws Unsupported on a backend without. */
export function descriptorBackend(what: string): Backend {
  const backend = currentBackend(what);
  const why = backend.services?.descriptors;
  if (why !== undefined) throw new Unsupported(what, why);
  return backend;
}

/** Node's stream over `fd`, an open stream descriptor of the process, or an error naming what it is. */
function nodeStreamOf(fd: number, what: string): net.Socket {
  let stat: ReturnType<typeof fstatSync>;
  try {
    stat = fstatSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "EBADF";
    throw systemError(
      code,
      "fstat",
      `${what}: ${fd} is not an open file descriptor of this process: pass one it has open (a pipe's end, a socket, a tty)`,
    );
  }
  // A tty is read through Node's tty handle (net.Socket takes pipes and sockets only).
  if (tty.isatty(fd)) return new tty.ReadStream(fd);
  if (stat.isSocket() || stat.isFIFO()) return new net.Socket({ fd, ...directionsOf(fd) });
  const is = stat.isDirectory() ? "a directory" : stat.isFile() ? "a regular file" : "a device";
  throw new TypeError(`${what}: descriptor ${fd} is ${is}, not a stream (a pipe, a socket, a tty): read and write files with open()`);
}

/** O_ACCMODE's values: read only, write only. */
const RDONLY = 0;
const WRONLY = 1;

/**
 * Which sides of `fd` Node may use, from its access mode (Linux tells it in
 * /proc/self/fdinfo; elsewhere both are tried): Node starts reading a
 * readable socket at once, which fails on a write-only FIFO end.
 */
function directionsOf(fd: number): { readable: boolean; writable: boolean } {
  let info: string;
  try {
    info = readFileSync(`/proc/self/fdinfo/${fd}`, "latin1");
  } catch {
    return { readable: true, writable: true };
  }
  const flags = /^flags:\s*([0-7]+)/m.exec(info);
  const mode = flags === null ? -1 : Number.parseInt(flags[1]!, 8) & 3;
  return { readable: mode !== WRONLY, writable: mode !== RDONLY };
}

/**
 * A socket over `fd`, an open descriptor of the process that is a stream —
 * a pipe's end, a FIFO, a stream socket made elsewhere, a tty (Miou_unix's
 * `of_file_descr`). It is `connected` from the start and owns `fd` from
 * now on: `close` closes it. Reading a pipe whose writer closed gives 0.
 * On every backend it goes through Node's handle for the descriptor
 * (`net.Socket`, or `tty.ReadStream` for a tty), which libuv makes
 * non-blocking, as `fromStream` adapts streams: its kind is `"stream"`, and
 * `run` does not close it at its end (close it, or `using` it).
 *
 * @example
 * ```ts
 * import { ofFd, read, run } from "@bobbin/unix";
 *
 * await run(function* () {
 *   using stdin = ofFd(0);
 *   const buf = Buffer.alloc(4096);
 *   for (let n; (n = yield* read(stdin, buf)) > 0; ) process.stdout.write(buf.subarray(0, n));
 * });
 * ```
 * @throws TypeError when `fd` is not an integer ≥ 0, or is a regular file, a directory or a device (use `open`).
 * @throws EBADF (a Node-style error) when `fd` is not open.
 * @throws Unsupported on a backend without descriptors (`@bobbin/sim`'s).
 * @throws TypeError outside a task of `@bobbin/unix`'s `run`.
 */
export function ofFd(fd: number): Socket {
  descriptorBackend("ofFd(fd)");
  if (!Number.isInteger(fd) || fd < 0) throw new TypeError(`ofFd(fd) expects a file descriptor (an integer ≥ 0), got ${describe(fd)}`);
  return fromStream(nodeStreamOf(fd, "ofFd(fd)"));
}

/**
 * A pipe's two ends, `[readEnd, writeEnd]`, as connected sockets of the
 * current backend (Miou_unix's `Unix.pipe`, as an operation): what is
 * written to `writeEnd` is read from `readEnd`, and once `writeEnd` is
 * closed, reading `readEnd` gives 0. The ends are a connected pair of Unix
 * stream sockets, as libuv makes for a child's stdio: `socketpair(2)` on the
 * native and io_uring backends, a pair connected through a listener in a
 * temporary directory on the libuv backend (Node has no `socketpair`). Use
 * each end in its direction only. Close both.
 *
 * @example
 * ```ts
 * import { close, pipe, read, run, write } from "@bobbin/unix";
 *
 * await run(function* () {
 *   const [r, w] = yield* pipe();
 *   yield* write(w, "hello");
 *   yield* close(w);
 *   const buf = Buffer.alloc(16);
 *   const n = yield* read(r, buf);             // 5
 *   console.log(yield* read(r, buf, n));       // 0: the writer closed
 *   yield* close(r);
 * });
 * ```
 * @throws Unsupported on a backend without descriptors (`@bobbin/sim`'s).
 * @throws the system's error (`EMFILE`…), to this task only.
 * @throws TypeError outside a task of `@bobbin/unix`'s `run`.
 * @throws Cancelled when the task is cancelled while the pair connects (nothing is left open).
 */
export function pipe(): B.Operation<[Socket, Socket]> {
  const backend = descriptorBackend("pipe()");
  return backend.socketPair !== undefined && backend.adoptStream !== undefined ? adoptedPair(backend) : pairThroughListener(backend);
}

function* adoptedPair(backend: Backend): Generator<B.Instruction, [Socket, Socket], unknown> {
  const [a, b] = backend.socketPair!();
  let readEnd: Socket;
  try {
    readEnd = backend.adoptStream!(a);
  } catch (error) {
    closeSync(b); // a failed adoption closed `a` (see the contract)
    throw error;
  }
  try {
    return [readEnd, backend.adoptStream!(b)];
  } catch (error) {
    readEnd[Symbol.dispose]();
    throw error;
  }
}

function* pairThroughListener(backend: Backend): Generator<B.Instruction, [Socket, Socket], unknown> {
  const dir = mkdtempSync(join(tmpdir(), "bobbin-pipe-"));
  const listener = backend.socket("unix");
  let writeEnd: Socket | null = backend.socket("unix");
  try {
    const path = join(dir, "pipe.sock");
    yield* bindAndListen(listener, { path }, { backlog: 1 });
    yield* connect(writeEnd, { path });
    const [readEnd] = yield* accept(listener);
    const pair: [Socket, Socket] = [readEnd, writeEnd];
    writeEnd = null;
    return pair;
  } finally {
    writeEnd?.[Symbol.dispose]();
    listener[Symbol.dispose]();
    yield* close(listener);
    rmSync(dir, { recursive: true, force: true });
  }
}
