/**
 * The file of a Unix listener: a backend unlinks it when the listener
 * closes (as libuv does), and must unlink nothing else.
 *
 * Two rules make that so. The path is resolved to an absolute one at bind
 * time (a relative path unlinked after a `chdir` names another file), and
 * the file is unlinked only while it is still the socket that was bound: the
 * same device and inode as right after bind, and still a socket (a file put
 * in its place by someone else stays).
 */
import { randomBytes } from "node:crypto";
import { linkSync, lstatSync, unlinkSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { systemError } from "../system-error.js";

/**
 * The longest path a staged name may have: `sun_path` holds 104 bytes on
 * macOS and the BSDs (108 on Linux), its terminating NUL included.
 */
const MAX_STAGED_PATH = 103;

/**
 * A Unix socket's file as this process bound it. A backend makes one right
 * after bind succeeds ({@link SocketFile.bound}, or {@link SocketFile.place}
 * for a socket bound under a staged name) and calls {@link SocketFile.remove}
 * when the listener closes, before it closes the descriptor.
 *
 * @example
 * ```ts
 * const rc = sys.bind(fd, path, -1);
 * if (rc === 0) s.file = SocketFile.bound(path);
 * // closing:
 * s.file?.remove();
 * ```
 * @throws never itself; see each method.
 */
export class SocketFile {
  private constructor(
    /** Where the socket is, as an absolute path. */
    readonly path: string,
    private readonly dev: bigint,
    private readonly ino: bigint,
  ) {}

  /**
   * The socket just bound at `path` (a relative path is resolved against the
   * current directory, as bind did), or null for an abstract socket (no
   * file) or when no socket is there.
   *
   * @example
   * ```ts
   * s.file = SocketFile.bound("./app.sock");   // s.file.path is absolute
   * ```
   * @throws never.
   */
  static bound(path: string): SocketFile | null {
    if (path === "" || path.startsWith("\0")) return null;
    const absolute = resolve(path);
    const id = identity(absolute);
    return id === null ? null : new SocketFile(absolute, id.dev, id.ino);
  }

  /**
   * For a backend whose library unlinks the path it bound when it closes,
   * unconditionally (libuv's pipes): a fresh name beside `path` to bind
   * instead, which {@link SocketFile.place} then moves to `path`, so that
   * what the library unlinks is a name nobody uses. Null when there is no
   * file (an abstract socket) or the name would not fit a socket address.
   *
   * @example
   * ```ts
   * const staged = SocketFile.staging(path);
   * server.listen({ path: staged ?? path });
   * ```
   * @throws never.
   */
  static staging(path: string): string | null {
    if (path === "" || path.startsWith("\0")) return null;
    const staged = join(dirname(path), `.${basename(path).slice(0, 8)}.${randomBytes(5).toString("hex")}`);
    const room = Math.max(MAX_STAGED_PATH, Buffer.byteLength(path));
    return Buffer.byteLength(staged) <= room ? staged : null;
  }

  /**
   * Moves the socket bound at `staged` to `path` (a hard link, which fails if
   * `path` exists, then the staged name unlinked) and returns its file.
   *
   * @example
   * ```ts
   * server.on("listening", () => { s.file = SocketFile.place(staged, path); });
   * ```
   * @throws Error with `code` `EADDRINUSE` when `path` exists (as bind would
   * say), or the link's error (`EACCES`…); the staged name is unlinked then too.
   */
  static place(staged: string, path: string): SocketFile {
    try {
      linkSync(staged, path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EEXIST") throw Object.assign(systemError("EADDRINUSE", "listen", `${path} exists`), { address: path });
      throw error;
    } finally {
      unlink(staged);
    }
    const placed = SocketFile.bound(path);
    if (placed === null)
      throw Object.assign(systemError("EADDRINUSE", "listen", `${path} was replaced while it was bound`), { address: path });
    return placed;
  }

  /**
   * Unlinks the file if it is still the socket bound here; returns whether it did.
   *
   * @example
   * ```ts
   * s.file?.remove();
   * s.file = null;
   * ```
   * @throws never (a file that cannot be unlinked stays).
   */
  remove(): boolean {
    const id = identity(this.path);
    if (id === null || id.dev !== this.dev || id.ino !== this.ino) return false;
    return unlink(this.path);
  }
}

/** The device and inode of the socket at `path`, or null when there is none (or it is not a socket). */
function identity(path: string): { dev: bigint; ino: bigint } | null {
  try {
    const st = lstatSync(path, { bigint: true });
    return st.isSocket() ? { dev: st.dev, ino: st.ino } : null;
  } catch {
    return null;
  }
}

function unlink(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}
