/**
 * `serve`: an HTTP server as an operation. It listens, runs each request as
 * a task (the handler) in a group it owns, and runs until it is cancelled:
 * then it stops taking connections, lets the requests in flight finish
 * within a grace period, cancels those that have not, and returns once
 * every connection is closed.
 */
import * as http from "node:http";
import * as B from "@bobbin/core";
import { checkOptionNames, describe } from "@bobbin/core/lowlevel";
import { Timeout, withTimeout } from "@bobbin/unix";
import { type ListeningAddress, listen } from "./listen.js";
import { DEFAULT_BODY_LIMIT, Request } from "./request.js";
import { Response } from "./response.js";
import { attach } from "./server-state.js";
import { type Handler, Service, type Settings } from "./service.js";

/**
 * Options of {@link serve}. Times are in seconds, as everywhere in `@bobbin/unix`.
 *
 * @example
 * ```ts
 * const options: ServeOptions = { host: "127.0.0.1", port: 8080, deadline: 10, limit: 1000, grace: 5 };
 * ```
 */
export interface ServeOptions {
  /** The address to listen on (default `"127.0.0.1"`; `"0.0.0.0"` or `"::"` for every interface). */
  readonly host?: string | undefined;
  /** The port; 0 lets the system choose (see `onListening`). */
  readonly port: number;
  /** Called once the server listens, with its address (the port chosen for port 0). */
  readonly onListening?: ((address: ListeningAddress) => void) | undefined;
  /** How long a handler may run, in seconds: then it is cancelled and the request answered 504. Default: no deadline. */
  readonly deadline?: number | undefined;
  /** How many requests may be in flight at once: more are answered 503 at once. Default: no limit. */
  readonly limit?: number | undefined;
  /** How long the requests in flight may take to finish once `serve` is cancelled, in seconds; then they are cancelled. Default 5. */
  readonly grace?: number | undefined;
  /**
   * Hears of a handler's failure (the request was answered 500). Without it,
   * a handler's failure fails `serve` (it stops at once and throws it); what
   * `onError` throws does too.
   */
  readonly onError?: ((error: unknown, req: Request) => void) | undefined;
  /** The largest body `req.bytes()`, `text()` and `json()` read, in bytes (default 1 MiB): a larger one is answered 413. */
  readonly bodyLimit?: number | undefined;
  /** Options of Node's `http.createServer` (`keepAliveTimeout`, `headersTimeout`, `requestTimeout`, `maxHeaderSize`…). */
  readonly node?: Omit<http.ServerOptions, "IncomingMessage" | "ServerResponse"> | undefined;
}

const DEFAULT_GRACE = 5;

/** Every option of {@link ServeOptions}: any other key is a mistake (`timeout` for `deadline`, say) that would be ignored. */
const OPTION_NAMES: readonly (keyof ServeOptions)[] = [
  "host",
  "port",
  "onListening",
  "deadline",
  "limit",
  "grace",
  "onError",
  "bodyLimit",
  "node",
];

function seconds(value: unknown, what: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || Number.isNaN(value) || value <= 0) {
    throw new RangeError(`serve({ ${what} }): ${what} must be a number of seconds > 0 (Infinity for none), got ${describe(value)}`);
  }
  return value;
}

function count(value: unknown, what: string, fallback: number): number {
  if (value === undefined || value === Number.POSITIVE_INFINITY) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new RangeError(`serve({ ${what} }): ${what} must be an integer ≥ 1 (Infinity for none), got ${describe(value)}`);
  }
  return value;
}

/**
 * Serves HTTP/1.1 — Node's own implementation — until cancelled. Each
 * request runs `handler(req, res)` as a task, in a group `serve` owns: `req`
 * is Node's `IncomingMessage` with operations that read its body (`text`,
 * `json`, `bytes`, `chunk`), `res` Node's `ServerResponse` with `send`, an
 * operation that ends it.
 *
 * - A handler is **cancelled when its client disconnects** before the
 *   response was sent (its `finally` runs at once), and **when its
 *   `deadline` passes** (the request is answered 504 if nothing was sent yet,
 *   or its connection is cut).
 * - **Errors.** A handler that throws an `HttpError` answers with its status;
 *   any other error is answered 500 and goes to `onError` — without it, it
 *   fails `serve`, which stops at once (its requests cancelled) and throws it.
 *   So does what a handler's cleanup throws once it was cancelled (its client
 *   left, its deadline passed, or `serve`'s grace is over), but for `send`'s
 *   `ECONNRESET` there: the client leaving, which nobody hears of.
 * - Past `limit` requests in flight, a request is answered 503 at once.
 * - **Cancelling `serve`** stops it: it takes no more connections (they are
 *   refused), closes idle ones, answers requests that still come in 503, and
 *   lets those in flight finish within `grace` seconds (their responses close
 *   their connection); then it cancels those left, closes every connection,
 *   and returns once none is left.
 * - **Any backend.** On libuv (the default) Node's server listens itself; on
 *   the native and io_uring backends of `@bobbin/native-poll` and in
 *   `@bobbin/sim`, the backend's socket listens and each connection reaches
 *   Node's server as a `toStream` stream.
 *
 * @example
 * ```ts
 * import { serve } from "@bobbin/http";
 * import { main } from "@bobbin/unix";
 *
 * main(function* () {
 *   yield* serve({ port: 8080, onListening: ({ port }) => console.log(`http://127.0.0.1:${port}/`) }, function* (req, res) {
 *     yield* res.send({ hello: req.url });
 *   });   // Ctrl-C: in-flight requests finish, then the program exits (130)
 * });
 * ```
 * @throws the listen's error (`EADDRINUSE`, `EACCES`…); a handler's error when there is no `onError`, or what `onError` throws.
 * @throws TypeError / RangeError for bad or unknown options, or a handler that is not a generator function (at once).
 * @throws Cancelled when it is cancelled, once every connection is closed; the
 * server's failure instead when it failed while it stopped (a handler's error
 * without `onError`), or, stopped by a caller's `Timeout`, core's `Failures`
 * of that `Timeout` and the failure.
 */
export function serve(options: ServeOptions, handler: Handler): B.Operation<void> {
  if (options === null || typeof options !== "object")
    throw new TypeError(`serve(options, handler) expects options { host, port, … }, got ${describe(options)}`);
  if (typeof handler !== "function")
    throw new TypeError(`serve(options, handler) expects a generator function (function* (req, res) { … }), got ${describe(handler)}`);
  checkOptionNames("serve(options, handler)", options, OPTION_NAMES);
  const { host = "127.0.0.1", port, onListening, onError, node = {} } = options;
  if (typeof host !== "string" || host.length === 0)
    throw new TypeError(`serve({ host }): host must be a non-empty string, got ${describe(host)}`);
  if (typeof port !== "number" || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`serve({ port }): port must be an integer from 0 to 65535 (0: the system chooses), got ${describe(port)}`);
  }
  if (onListening !== undefined && typeof onListening !== "function")
    throw new TypeError(`serve({ onListening }) must be a function, got ${describe(onListening)}`);
  if (onError !== undefined && typeof onError !== "function")
    throw new TypeError(`serve({ onError }) must be a function, got ${describe(onError)}`);
  if (node === null || typeof node !== "object")
    throw new TypeError(`serve({ node }) must be Node's http.createServer options, got ${describe(node)}`);
  const settings: Settings = {
    handler,
    deadline: seconds(options.deadline, "deadline", Number.POSITIVE_INFINITY),
    limit: count(options.limit, "limit", Number.POSITIVE_INFINITY),
    onError,
    bodyLimit: count(options.bodyLimit, "bodyLimit", DEFAULT_BODY_LIMIT),
  };
  const grace = seconds(options.grace, "grace", DEFAULT_GRACE);
  return serving(new Service(settings), { host, port, onListening, node }, grace);
}

/** Where and how Node's server listens. */
interface Place {
  readonly host: string;
  readonly port: number;
  readonly onListening: ((address: ListeningAddress) => void) | undefined;
  readonly node: Omit<http.ServerOptions, "IncomingMessage" | "ServerResponse">;
}

function* serving(service: Service, place: Place, grace: number): Generator<B.Instruction, void, unknown> {
  const running = B.spawn({ name: "serve" }, run, service, place);
  try {
    yield* B.awaitExn(running);
  } catch (error) {
    if (running.status !== "pending") throw error; // the server's own failure
    // Cancelled (or a timeout of the caller's): the requests in flight have `grace` seconds. What the
    // server fails with meanwhile is not lost: it is serve's error (after a timeout's, not instead).
    try {
      yield* stopWithin(service, running, grace);
    } catch (stopped) {
      throw error instanceof B.Cancelled ? stopped : new B.Failures([error, stopped]);
    }
    throw error;
  }
}

/** Stops the server, waits `grace` seconds at most for it to drain, then cancels what is left; throws what the server failed with. */
function* stopWithin(service: Service, running: B.Task<void>, grace: number): Generator<B.Instruction, void, unknown> {
  service.stop();
  let outcome: B.Result<void> | null = null;
  try {
    outcome = yield* withTimeout(grace, B.awaitTask(running));
  } catch (error) {
    if (!(error instanceof Timeout)) throw error;
  } finally {
    if (running.status === "pending") yield* B.cancel(running);
  }
  if (outcome !== null && !outcome.ok) throw outcome.error;
}

/** The server's task: its requests run as tasks of its group; it returns once it has stopped and drained. */
function* run(service: Service, place: Place): Generator<B.Instruction, void, unknown> {
  service.open();
  try {
    yield* B.group({ name: "requests" }, function* requests(g) {
      g.spawn({ name: "serve's requests" }, function* () {
        yield* service.spawnRequests(g);
      });
      try {
        yield* serveUntilStopped(service, place);
      } finally {
        g.cancel(); // the requests left (a failure's, or cancelled with serve)
      }
    });
  } catch (error) {
    // Cancelled once the grace is over: what the server failed with meanwhile (a handler's cleanup,
    // settled by its request's task) is not lost to the cancellation.
    throw error instanceof B.Cancelled && service.failure !== null ? service.failure.error : error;
  } finally {
    service.close();
  }
  if (service.failure !== null) throw service.failure.error;
}

/** Listens, serves until told to stop, drains the requests in flight unless the server failed, and closes. */
function* serveUntilStopped(service: Service, place: Place): Generator<B.Instruction, void, unknown> {
  const server = http.createServer({ ...place.node, IncomingMessage: Request, ServerResponse: Response } as http.ServerOptions);
  attach(server, service);
  server.on("request", service.onRequest);
  const listening = yield* listen(server, place.host, place.port, (error) => service.fail(error));
  service.closeIdle = listening.closeIdle;
  try {
    place.onListening?.(listening.address);
    yield* service.untilStopped();
    yield* listening.stopAccepting();
    if (service.failure === null) {
      listening.closeIdle();
      yield* service.drained();
    }
  } finally {
    yield* listening.close();
  }
}
