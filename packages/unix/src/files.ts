/**
 * Files as operations: `readFile`, `writeFile`, `appendFile`, and `open`
 * giving a handle with `read`, `write`, `sync` and `close`. Each waits in the
 * calling task and is cancelled with it: Node's `AbortSignal` stops the work
 * where Node takes one (whole-file reads and writes, between two chunks);
 * elsewhere the task leaves at once, the result is dropped, and a file opened
 * for it in the meantime is closed.
 *
 * The names and signatures are those of `@bobbin/sim`'s simulated disk, so
 * that a program's file code reads the same on either.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import { promisify } from "node:util";
import * as B from "@bobbin/core";
import { describe } from "@bobbin/core/lowlevel";
import { rangeLength, rangeStart } from "./socket.js";
import { systemError } from "./system-error.js";

/**
 * How a file is opened, as Node's `fs.open` takes it: `"r"` (read; the file
 * must exist), `"r+"` (read and write; must exist), `"w"` (write; created or
 * emptied), `"w+"` (read and write; created or emptied), `"a"` (append;
 * created if missing), `"a+"` (read and append).
 *
 * @example
 * ```ts
 * const log = yield* open("events.log", "a");
 * ```
 */
export type OpenFlags = "r" | "r+" | "w" | "w+" | "a" | "a+";

const FLAGS: readonly OpenFlags[] = ["r", "r+", "w", "w+", "a", "a+"];

/**
 * An open file (`open`): sequential reads and writes at its position (writes
 * of a file opened with `"a"` or `"a+"` go to its end), `sync` and `close`,
 * each an operation of the calling task.
 *
 * @example
 * ```ts
 * const f = yield* open("data.bin", "w+");
 * try {
 *   yield* f.write("hello");
 *   yield* f.sync();
 * } finally {
 *   yield* f.close();
 * }
 * ```
 */
export interface FileHandle {
  /** The path it was opened with. */
  readonly path: string;
  /** How it was opened. */
  readonly flags: OpenFlags;
  /**
   * Reads at most `len` bytes (default: the rest of `buf` from `off`) at the
   * file's position into `buf[off…]`; returns how many, 0 at the end of the file.
   * @throws EBADF when the handle is closed or was not opened for reading; RangeError/TypeError for bad arguments.
   */
  read(buf: Uint8Array, off?: number, len?: number): B.Operation<number>;
  /**
   * Writes all of `data[off, off + len)` (a string as UTF-8) at the file's position (its end for `"a"`, `"a+"`).
   * @throws EBADF when the handle is closed or was opened only for reading; the system's error (`ENOSPC`…); RangeError/TypeError for bad arguments.
   */
  write(data: string | Uint8Array, off?: number, len?: number): B.Operation<void>;
  /**
   * Flushes the file's data and metadata to the disk (`fsync`).
   * @throws EBADF when the handle is closed; the system's error (`EIO`…).
   */
  sync(): B.Operation<void>;
  /**
   * Closes the file. Closing a closed handle does nothing.
   * @throws the system's error of the close (`EIO`…).
   */
  close(): B.Operation<void>;
}

const openFd = promisify(fs.open);
const fstat = promisify(fs.fstat);
const closeFd = promisify(fs.close);
const readFd = promisify(fs.readFile) as (fd: number, options: { signal: AbortSignal }) => Promise<Buffer>;

/** Opening never waits for a FIFO's writer (it waits for data instead, in a stream that cancelling closes). */
const READ_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

function checkPath(path: unknown, what: string): string {
  if (typeof path !== "string" || path.length === 0)
    throw new TypeError(`${what} expects a path (a non-empty string), got ${describe(path)}`);
  if (path.includes("\0")) throw new TypeError(`${what}: a path cannot contain a NUL byte`);
  return path;
}

function bytesOf(data: unknown, what: string): Uint8Array {
  if (typeof data === "string") return Buffer.from(data, "utf8");
  if (data instanceof Uint8Array) return data;
  throw new TypeError(`${what} expects data as a string or a Buffer/Uint8Array, got ${describe(data)}`);
}

/**
 * The whole content of the file at `path`, as a `Buffer`. A FIFO (or a Unix
 * socket file) is read as a stream until its writer closes it — waiting for a
 * writer to come, as a plain read would — and cancelling closes it at once.
 *
 * @example
 * ```ts
 * import { run, readFile } from "@bobbin/unix";
 *
 * await run(function* () {
 *   const config = JSON.parse((yield* readFile("package.json")).toString("utf8"));
 *   console.log(config.name);
 * });
 * ```
 * @throws the system's error (`ENOENT`, `EACCES`, `EISDIR`…), to this task only.
 * @throws TypeError when `path` is not a non-empty string.
 * @throws Cancelled when the task is cancelled: the read stops and the file is closed.
 */
export function readFile(path: string): B.Operation<Buffer> {
  const p = checkPath(path, "readFile(path)");
  return B.promise((signal) => readWhole(p, signal));
}

async function readWhole(path: string, signal: AbortSignal): Promise<Buffer> {
  const fd = await openFd(path, READ_FLAGS);
  let handedOver = false;
  try {
    signal.throwIfAborted();
    const stat = await fstat(fd);
    signal.throwIfAborted();
    if (stat.isDirectory()) throw systemError("EISDIR", "read", `${path} is a directory`);
    if (stat.isFIFO() || stat.isSocket()) {
      handedOver = true;
      return await readStream(new net.Socket({ fd, readable: true, writable: false }), signal);
    }
    return await readFd(fd, { signal });
  } finally {
    if (!handedOver) await closeFd(fd);
  }
}

/** Reads `stream` to its end; settles once it has closed (its descriptor with it). Aborting destroys it. */
function readStream(stream: net.Socket, signal: AbortSignal): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const abort = (): void => void stream.destroy(signal.reason as Error);
    signal.addEventListener("abort", abort, { once: true });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", () => {}); // the error is the one 'close' reports, below
    stream.on("close", () => {
      signal.removeEventListener("abort", abort);
      if (stream.errored) reject(stream.errored);
      else if (!stream.readableEnded) reject(new Error("readFile(): the stream closed before its end"));
      else resolve(Buffer.concat(chunks));
    });
  });
}

/**
 * Writes `data` (a string as UTF-8) to the file at `path`, created or
 * emptied first.
 *
 * @example
 * ```ts
 * import { run, writeFile, readFile } from "@bobbin/unix";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 *
 * await run(function* () {
 *   const path = join(tmpdir(), "bobbin-hello.txt");
 *   yield* writeFile(path, "hello\n");
 *   console.log((yield* readFile(path)).toString());   // hello
 * });
 * ```
 * @throws the system's error (`ENOENT` for a missing directory, `EACCES`, `ENOSPC`…), to this task only.
 * @throws TypeError for a bad path or data.
 * @throws Cancelled when the task is cancelled: the write stops between two chunks (the file may hold part of `data`).
 */
export function writeFile(path: string, data: string | Uint8Array): B.Operation<void> {
  const p = checkPath(path, "writeFile(path, data)");
  const bytes = bytesOf(data, "writeFile(path, data)");
  return B.promise((signal) => fs.promises.writeFile(p, bytes, { signal }));
}

/**
 * Appends `data` (a string as UTF-8) to the file at `path`, created if missing.
 *
 * @example
 * ```ts
 * yield* appendFile("events.log", `${new Date().toISOString()} started\n`);
 * ```
 * @throws the system's error (`EACCES`, `ENOSPC`…), to this task only.
 * @throws TypeError for a bad path or data.
 * @throws Cancelled when the task is cancelled: the write stops between two chunks.
 */
export function appendFile(path: string, data: string | Uint8Array): B.Operation<void> {
  const p = checkPath(path, "appendFile(path, data)");
  const bytes = bytesOf(data, "appendFile(path, data)");
  return B.promise((signal) => fs.promises.writeFile(p, bytes, { flag: "a", signal }));
}

/**
 * Opens the file at `path` (`flags` as Node's `fs.open`; default `"r"`) and
 * returns a handle whose operations read and write it. Close it (in a
 * `finally`). Opening a FIFO waits, in a thread of Node's pool that
 * cancelling cannot interrupt, until its other end is opened: read FIFOs with
 * `readFile`.
 *
 * @example
 * ```ts
 * import { run, open } from "@bobbin/unix";
 *
 * await run(function* () {
 *   const f = yield* open("package.json");
 *   try {
 *     const buf = Buffer.alloc(64);
 *     const n = yield* f.read(buf);
 *     console.log(buf.toString("utf8", 0, n));
 *   } finally {
 *     yield* f.close();
 *   }
 * });
 * ```
 * @throws the system's error (`ENOENT` for `"r"`/`"r+"` on a missing file, `EACCES`, `EISDIR`…), to this task only.
 * @throws TypeError for a bad path or flags.
 * @throws Cancelled when the task is cancelled: a file opened meanwhile is closed.
 */
export function open(path: string, flags: OpenFlags = "r"): B.Operation<FileHandle> {
  const p = checkPath(path, "open(path, flags)");
  if (!FLAGS.includes(flags)) {
    throw new TypeError(`open(path, flags): flags must be one of ${FLAGS.map((f) => `"${f}"`).join(", ")}, got ${describe(flags)}`);
  }
  return B.promise(async (signal) => {
    const handle = await fs.promises.open(p, flags);
    if (signal.aborted) {
      await handle.close();
      signal.throwIfAborted();
    }
    return new OpenFile(handle, p, flags);
  });
}

/** A `FileHandle` over Node's. */
class OpenFile implements FileHandle {
  constructor(
    private readonly handle: fs.promises.FileHandle,
    readonly path: string,
    readonly flags: OpenFlags,
  ) {}

  read(buf: Uint8Array, off?: number, len?: number): B.Operation<number> {
    const o = rangeStart(buf, off, "read()");
    const l = rangeLength(buf, o, len, "read()");
    return B.promise(async () => (await this.handle.read(buf, o, l, null)).bytesRead);
  }

  write(data: string | Uint8Array, off?: number, len?: number): B.Operation<void> {
    const bytes = bytesOf(data, "write(data)");
    const o = rangeStart(bytes, off, "write()");
    const l = rangeLength(bytes, o, len, "write()");
    return B.promise(async () => {
      for (let done = 0; done < l; ) done += (await this.handle.write(bytes, o + done, l - done, null)).bytesWritten;
    });
  }

  sync(): B.Operation<void> {
    return B.promise(() => this.handle.sync());
  }

  close(): B.Operation<void> {
    return B.promise(() => this.handle.close());
  }

  toString(): string {
    return `FileHandle(${this.path}, "${this.flags}")`;
  }
}
