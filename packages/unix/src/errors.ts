/**
 * The errors of `@bobbin/unix`. System errors are Node's own (`Error` with
 * `code`, `errno`, `syscall`: `ECONNREFUSED`, `EPIPE`, `ECONNRESET`…); the
 * classes here are Bobbin's, each with a stable `name` and a `code`.
 */
import { BobbinError } from "@bobbin/core";

/**
 * An operation run by {@link withTimeout} did not finish in time. Thrown at
 * the I/O operation the task was waiting in (or the next one it starts inside
 * the timed-out scope). It is made when the deadline passes, and its stack,
 * taken as it leaves the scope, begins at the caller of `withTimeout`; caught
 * inside the scope, it has its message only. `source` names what set the
 * deadline: a function that times its work with `withTimeout(seconds, op,
 * source)` tells its own Timeout from one its work threw by that field.
 *
 * @example
 * ```ts
 * try {
 *   yield* withTimeout(0.5, connect(sock, { host: "127.0.0.1", port }), "connect's timeout");
 * } catch (e) {
 *   if (e instanceof Timeout && e.source === "connect's timeout") console.log(`gave up after ${e.seconds}s`);
 * }
 * ```
 * @throws never itself: it is what the operations run by `withTimeout` throw.
 */
export class Timeout extends BobbinError {
  /** Always `"ETIMEDOUT"`, as a system timeout would say. */
  readonly code = "ETIMEDOUT";
  constructor(
    /** The delay that expired, in seconds. */
    readonly seconds: number,
    /**
     * What set the delay, also in the message: `"withTimeout"` (the default),
     * or the `source` given to `withTimeout` (`"fetch's timeout"`…).
     */
    readonly source: string = "withTimeout",
  ) {
    super(`the operation did not finish within ${seconds} s (${source})`);
  }
}

/**
 * The stream ended before `readExactly` could fill its buffer (Miou's `End_of_file`).
 *
 * @example
 * ```ts
 * try { yield* readExactly(sock, header); } catch (e) { if (e instanceof EndOfFile) return; throw e; }
 * ```
 * @throws never itself: it is what `readExactly` throws.
 */
export class EndOfFile extends BobbinError {
  /** Always `"EOF"`. */
  readonly code = "EOF";
  constructor(
    /** How many bytes were read before the end of the stream. */
    readonly read: number,
    /** How many bytes were wanted. */
    readonly wanted: number,
  ) {
    super(`the stream ended after ${read} of the ${wanted} bytes readExactly wanted`);
  }
}

/**
 * An operation on a socket that was closed (by `close`, an ownership
 * finaliser, or the end of its `run`). Unix would say `EBADF`.
 *
 * @example
 * ```ts
 * yield* close(sock);
 * yield* write(sock, data);   // throws SocketClosed
 * ```
 * @throws never itself: it is what every socket operation throw.
 */
export class SocketClosed extends BobbinError {
  /** Always `"EBADF"`, the errno Unix gives for a closed descriptor. */
  readonly code = "EBADF";
  constructor(operation: string) {
    super(
      `${operation} on a closed socket: the socket was closed (by close(), an ownership finaliser or the end of run); make a new socket`,
    );
  }
}

/**
 * What a backend cannot do: `ofFd`, `pipe` and `spawnProcess` on a backend
 * without file descriptors or processes (`@bobbin/sim`'s). The message names
 * the operation, the rule, and what to do instead.
 *
 * @example
 * ```ts
 * try {
 *   yield* spawnProcess("ls");
 * } catch (error) {
 *   if (error instanceof Unsupported) console.error(error.message);
 * }
 * ```
 * @throws never itself: it is what those operations throw.
 */
export class Unsupported extends BobbinError {
  /** Always `"ENOTSUP"`. */
  readonly code = "ENOTSUP";
  constructor(
    /** The operation refused, e.g. `"spawnProcess()"`. */
    readonly operation: string,
    why: string,
  ) {
    super(`${operation}: ${why}`);
  }
}

/**
 * A lent chunk of `readChunk` was misused: its bytes read after it went back
 * to the runtime, released twice, or a second `readChunk` started on a socket
 * while one waits there. `rule` says which; nothing was read or given back.
 *
 * @example
 * ```ts
 * const chunk = yield* readChunk(sock);
 * chunk?.release();
 * chunk?.bytes;   // throws ChunkMisuse, rule "use after release"
 * ```
 * @throws never itself: it is what `readChunk` and a chunk's `bytes`, `length` and `release` throw.
 */
export class ChunkMisuse extends BobbinError {
  /** Always `"ERR_BOBBIN_CHUNK_MISUSE"`. */
  readonly code = "ERR_BOBBIN_CHUNK_MISUSE";
  constructor(
    /** The rule broken. */
    readonly rule: "use after release" | "released twice" | "concurrent readChunk",
    message: string,
  ) {
    super(message);
  }
}

/**
 * The backend's `drain()` did not settle within the run's grace period
 * (`run`'s `cancelGraceMs`, 3000 ms by default) once the run was over, so
 * `run` settles without it: with this error, after the run's own error when
 * it had one (core's `Failures`, the run's error first). The run's processes
 * and signal handlers were released all the same, and the backend's
 * `finaliser` had begun closing its sockets; what the drain was waiting for
 * may outlive the run.
 *
 * @example
 * ```ts
 * class Stuck extends LibuvBackend { override drain() { return new Promise<void>(() => {}); } }
 * await run(function* () { return 1; }, { backend: () => new Stuck(), cancelGraceMs: 500 });
 * // rejects: DrainTimeout: the backend "libuv" (Stuck): its drain() did not settle within 500 ms of the run's end …
 * ```
 * @throws never itself: it is what `run` rejects with.
 */
export class DrainTimeout extends BobbinError {
  /** Always `"ERR_BOBBIN_DRAIN_TIMEOUT"`. */
  readonly code = "ERR_BOBBIN_DRAIN_TIMEOUT";
  constructor(
    /** The backend's `name`, and its class when that says more (`"libuv" (Stuck)`). */
    readonly backend: string,
    /** The grace period that passed, in ms (the run's `cancelGraceMs`). */
    readonly graceMs: number,
  ) {
    super(
      `the backend ${backend}: its drain() did not settle within ${graceMs} ms of the run's end, so the run ends without it ` +
        "and what it waited for may outlive the run: a backend's drain() must settle once its sockets and timers are gone " +
        "(or give run a larger cancelGraceMs if they take longer to close)",
    );
  }
}
