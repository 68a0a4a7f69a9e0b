/**
 * A host's disk: files that survive the host's crash as a real disk does —
 * what was synced is kept; what was written since may be lost, from some
 * point on, and the write at that point may be torn (only its first bytes
 * reach the disk). Which, each crash, is a choice of the world's (drawn
 * from the seed, replayed by a schedule line; `explore` keeps everything).
 *
 * Its operations have the shape of file operations on a real system
 * (`readFile`, `writeFile`, `appendFile`, `open` giving a handle with
 * `read`, `write`, `sync`, `close`), so that a program's file code runs on
 * it. Each is a step of its own: other tasks run between two of them, at the
 * same virtual instant; `sync` takes the disk's sync latency.
 *
 * The model: a file's changes since its last sync (its creation, a
 * truncation, each write) are kept in order. A crash keeps the first units
 * of them and loses the rest: a creation or a truncation is one unit, a
 * write one unit per byte. A file whose creation is lost is gone. Paths are
 * plain names: there are no directories (a sync makes the file's name
 * durable as well as its bytes).
 */

import type * as B from "@bobbin/core";
import { systemError } from "@bobbin/unix/backend";
import type { Host } from "./host.js";
import { drawLatency, type Latency } from "./link.js";
import type { World } from "./world.js";

/**
 * How a file is opened, as `fs.open` takes it: `"r"` (read; the file must
 * exist), `"r+"` (read and write; must exist), `"w"` (write; created or
 * emptied), `"w+"` (read and write; created or emptied), `"a"` (append;
 * created if missing), `"a+"` (read and append).
 *
 * @example
 * ```ts
 * const log = yield* disk.open("wal.log", "a");
 * ```
 */
export type OpenFlags = "r" | "r+" | "w" | "w+" | "a" | "a+";

const FLAGS: readonly OpenFlags[] = ["r", "r+", "w", "w+", "a", "a+"];

/**
 * Options of a host's disk (`sim.disk(name, options)`).
 *
 * @example
 * ```ts
 * sim.disk("db", { sync: { min: 0.002, max: 0.01 } });   // each sync takes 2 to 10 ms
 * ```
 */
export interface DiskOptions {
  /** How long a `sync` takes, in seconds (as a link's latency; default 1 to 5 ms). */
  readonly sync?: Latency | undefined;
}

const DEFAULT_SYNC: Latency = { min: 0.001, max: 0.005 };

/** A change of a file since its last sync. */
type Change =
  | { readonly kind: "create" }
  | { readonly kind: "truncate" }
  | { readonly kind: "write"; readonly at: number; readonly bytes: Uint8Array };

/** A change, numbered in the order of the file's changes (a sync keeps those made before it began). */
type Numbered = { readonly change: Change; readonly seq: number };

/** How many units a crash may keep or lose of a change. */
function unitsOf(change: Change): number {
  return change.kind === "write" ? change.bytes.length : 1;
}

/** `content` with `change` applied (its first `units` units). */
function apply(content: Uint8Array, change: Change, units = unitsOf(change)): Uint8Array {
  if (change.kind === "create") return content;
  if (change.kind === "truncate") return new Uint8Array(0);
  const bytes = units === change.bytes.length ? change.bytes : change.bytes.subarray(0, units);
  const end = change.at + bytes.length;
  const out = end > content.length ? new Uint8Array(end) : content.slice();
  if (end > content.length) out.set(content);
  out.set(bytes, change.at);
  return out;
}

class File {
  /** What reads see. */
  content: Uint8Array = new Uint8Array(0);
  /** What is on the disk for sure (null: the file's creation was never synced). */
  durable: Uint8Array | null = null;
  /** The changes since the last sync, in order. */
  pending: Numbered[] = [{ change: { kind: "create" }, seq: 0 }];
  /** The number of the last change. */
  seq = 0;

  change(change: Change): void {
    this.content = apply(this.content, change);
    if (unitsOf(change) !== 0) this.pending.push({ change, seq: ++this.seq });
  }

  /** The changes up to number `seq` reach the disk. */
  settle(seq: number): void {
    let durable = this.durable ?? new Uint8Array(0);
    while (this.pending.length !== 0 && this.pending[0]!.seq <= seq) durable = apply(durable, this.pending.shift()!.change);
    this.durable = durable;
  }

  get pendingUnits(): number {
    return this.pending.reduce((n, p) => n + unitsOf(p.change), 0);
  }
}

/**
 * A simulated host's disk (`sim.disk(name)`): its files survive the host's
 * crash and restart, as far as they were synced. Only the tasks of its
 * host use it.
 *
 * @example
 * ```ts
 * const disk = sim.disk("db");
 * sim.host("db", function* () {
 *   const log = yield* disk.open("wal.log", "a");
 *   yield* log.write("put x 1\n");
 *   yield* log.sync();          // from now on, a crash keeps it
 * });
 * ```
 * @throws never itself: its operations throw as a file system's do (see each).
 */
export class Disk {
  /** @internal */
  readonly files = new Map<string, File>();
  private readonly syncLatency: Latency;

  /** @internal */
  constructor(
    private readonly world: World,
    private readonly host: Host,
    options: DiskOptions,
  ) {
    this.syncLatency = options.sync ?? DEFAULT_SYNC;
  }

  /**
   * The bytes of a file, as a `Buffer`.
   *
   * @example
   * ```ts
   * const text = (yield* disk.readFile("state.json")).toString();
   * ```
   * @throws ENOENT when there is no such file; TypeError from a task of another host.
   */
  *readFile(path: string): Generator<B.Instruction, Buffer, unknown> {
    const file = this.existing(path, "readFile");
    const bytes = Buffer.from(file.content);
    yield* this.turn();
    return bytes;
  }

  /**
   * Makes a file hold `data` (created, or emptied first). Not synced: a
   * crash may lose it (open, write and `sync` to keep it).
   *
   * @example
   * ```ts
   * yield* disk.writeFile("state.json", JSON.stringify(state));
   * ```
   * @throws TypeError for a bad path or data, or from a task of another host.
   */
  *writeFile(path: string, data: string | Uint8Array): Generator<B.Instruction, void, unknown> {
    const bytes = bytesOf(data, "writeFile");
    const file = this.create(path, "writeFile", true);
    file.change({ kind: "write", at: 0, bytes });
    yield* this.turn();
  }

  /**
   * Adds `data` at the end of a file (created if missing). Not synced.
   *
   * @example
   * ```ts
   * yield* disk.appendFile("events.log", "started\n");
   * ```
   * @throws TypeError for a bad path or data, or from a task of another host.
   */
  *appendFile(path: string, data: string | Uint8Array): Generator<B.Instruction, void, unknown> {
    const bytes = bytesOf(data, "appendFile");
    const file = this.create(path, "appendFile", false);
    file.change({ kind: "write", at: file.content.length, bytes });
    yield* this.turn();
  }

  /**
   * Opens a file (see {@link OpenFlags}; default `"r"`). The handle reads
   * and writes at its position (from 0; at the end for `"a"`), and lasts
   * until it is closed or its host crashes.
   *
   * @example
   * ```ts
   * const log = yield* disk.open("wal.log", "a+");
   * ```
   * @throws ENOENT for `"r"` or `"r+"` on a missing file; TypeError for bad flags, or from a task of another host.
   */
  *open(path: string, flags: OpenFlags = "r"): Generator<B.Instruction, FileHandle, unknown> {
    if (!FLAGS.includes(flags))
      throw new TypeError(`disk.open(path, flags): flags must be one of ${FLAGS.map((f) => `"${f}"`).join(", ")}, got ${String(flags)}`);
    const file = flags[0] === "r" ? this.existing(path, "open") : this.create(path, "open", flags[0] === "w");
    const handle = new FileHandle(this, file, path, flags, this.host.incarnation);
    yield* this.turn();
    return handle;
  }

  /** @internal Checks that the running task may use this disk now. */
  enter(what: string): void {
    const host = this.world.currentHost(`disk.${what}()`);
    if (host !== this.host)
      throw new TypeError(`disk.${what}(): this is the disk of ${this.host.name}; a task of ${host.name} cannot use it`);
  }

  /** @internal Which life of its host a handle belongs to (0 while the host is down). */
  get incarnation(): number {
    return this.host.up ? this.host.incarnation : 0;
  }

  /** @internal A step of its own: the other ready tasks run first. */
  turn(): B.Operation<void> {
    return this.world.backend.sleep(0);
  }

  /** @internal Waits for a sync. */
  syncing(): B.Operation<void> {
    return this.world.backend.sleep(drawLatency(this.syncLatency, this.world.choices) * 1000);
  }

  /**
   * @internal The host crashed: each file keeps what was synced and some of
   * what was written since, as the world chooses.
   */
  crash(): void {
    for (const [path, file] of [...this.files]) {
      const units = file.pendingUnits;
      if (units === 0) continue;
      const lost = this.world.choices.torn(units);
      let keep = units - lost;
      let content = file.durable ?? new Uint8Array(0);
      let exists = file.durable !== null;
      for (const { change } of file.pending) {
        if (keep === 0) break;
        const n = Math.min(keep, unitsOf(change));
        content = apply(content, change, n);
        if (change.kind === "create") exists = true;
        keep -= n;
      }
      if (lost !== 0) {
        this.world.fault();
        this.world.trace?.record(this.host.name, `disk ${path}: a crash lost ${lost} of ${units} unsynced units`);
      }
      if (!exists) {
        this.files.delete(path);
        continue;
      }
      file.content = content;
      file.durable = content;
      file.pending = [];
    }
  }

  private existing(path: string, what: string): File {
    this.enter(what);
    checkPath(path, what);
    const file = this.files.get(path);
    if (file === undefined) throw systemError("ENOENT", what, `no such file on the disk of ${this.host.name}: ${path}`);
    return file;
  }

  private create(path: string, what: string, empty: boolean): File {
    this.enter(what);
    checkPath(path, what);
    let file = this.files.get(path);
    if (file === undefined) {
      file = new File();
      this.files.set(path, file);
    } else if (empty && file.content.length !== 0) file.change({ kind: "truncate" });
    return file;
  }
}

/**
 * An open file of a simulated disk (`disk.open`): reads and writes at its
 * position, `sync` makes what was written durable, `close` ends it. A host's
 * crash ends its handles: they fail with `EBADF` in its next incarnation.
 *
 * @example
 * ```ts
 * const f = yield* disk.open("data", "w+");
 * yield* f.write("hello");
 * yield* f.sync();
 * yield* f.close();
 * ```
 * @throws never itself: its operations throw as a file system's do (see each).
 */
export class FileHandle {
  private position = 0;
  private closed = false;

  /** @internal */
  constructor(
    private readonly disk: Disk,
    private readonly file: File,
    /** The path it was opened with. */
    readonly path: string,
    /** How it was opened. */
    readonly flags: OpenFlags,
    private readonly incarnation: number,
  ) {}

  /**
   * Reads up to `len` bytes at the handle's position into `buf[off…]`;
   * returns how many (0 at the end of the file).
   *
   * @example
   * ```ts
   * const n = yield* f.read(buf);
   * ```
   * @throws EBADF when the handle is closed, was not opened for reading, or its host crashed; RangeError for bad bounds.
   */
  *read(buf: Uint8Array, off = 0, len = buf.length - off): Generator<B.Instruction, number, unknown> {
    this.check("read", this.flags === "r" || this.flags.endsWith("+"));
    if (!(Number.isInteger(off) && Number.isInteger(len) && off >= 0 && len >= 0 && off + len <= buf.length))
      throw new RangeError(`read(buf, off, len): [off, off + len) must lie within buf (length ${buf.length}), got off=${off} len=${len}`);
    const content = this.file.content;
    const n = Math.max(0, Math.min(len, content.length - this.position));
    buf.set(content.subarray(this.position, this.position + n), off);
    this.position += n;
    yield* this.disk.turn();
    return n;
  }

  /**
   * Writes `data` (or `data[off, off + len)`) at the handle's position (at
   * the end of the file for `"a"` and `"a+"`). Not durable until `sync`.
   *
   * @example
   * ```ts
   * yield* f.write("record\n");
   * ```
   * @throws EBADF when the handle is closed, was opened only for reading, or its host crashed; TypeError / RangeError for bad data or bounds.
   */
  *write(data: string | Uint8Array, off = 0, len?: number): Generator<B.Instruction, void, unknown> {
    this.check("write", this.flags !== "r");
    const all = bytesOf(data, "write");
    const end = len === undefined ? all.length : off + len;
    if (!(Number.isInteger(off) && Number.isInteger(end) && off >= 0 && end >= off && end <= all.length))
      throw new RangeError(
        `write(data, off, len): [off, off + len) must lie within data (length ${all.length}), got off=${off} len=${len}`,
      );
    const bytes = all.slice(off, end);
    const at = this.flags[0] === "a" ? this.file.content.length : this.position;
    this.file.change({ kind: "write", at, bytes });
    this.position = at + bytes.length;
    yield* this.disk.turn();
  }

  /**
   * Waits until what was written to the file before the call is on the
   * disk (`fsync`): a crash after it keeps it. Takes the disk's sync latency.
   *
   * @example
   * ```ts
   * yield* f.write(record);
   * yield* f.sync();   // now acknowledge it
   * ```
   * @throws EBADF when the handle is closed or its host crashed.
   */
  *sync(): Generator<B.Instruction, void, unknown> {
    this.check("sync", true);
    const upTo = this.file.seq;
    yield* this.disk.syncing();
    this.file.settle(upTo);
  }

  /**
   * Closes the handle (closing it again does nothing). Closing does not sync.
   *
   * @example
   * ```ts
   * yield* f.close();
   * ```
   * @throws TypeError from a task of another host.
   */
  *close(): Generator<B.Instruction, void, unknown> {
    this.disk.enter("close");
    this.closed = true;
    yield* this.disk.turn();
  }

  private check(what: string, allowed: boolean): void {
    this.disk.enter(what);
    if (this.closed || this.incarnation !== this.disk.incarnation) {
      throw systemError("EBADF", what, this.closed ? `${this.path} is closed` : `${this.path} was opened before its host crashed`);
    }
    if (!allowed) throw systemError("EBADF", what, `${this.path} was opened with "${this.flags}"`);
  }
}

function checkPath(path: unknown, what: string): void {
  if (typeof path !== "string" || path.length === 0)
    throw new TypeError(`disk.${what}(path): the path must be a non-empty string, got ${String(path)}`);
}

function bytesOf(data: unknown, what: string): Uint8Array {
  if (typeof data === "string") return new Uint8Array(Buffer.from(data));
  if (data instanceof Uint8Array) return data.slice();
  throw new TypeError(`${what}(…, data): data must be a string or a Uint8Array, got ${typeof data}`);
}
