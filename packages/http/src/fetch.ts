/**
 * `fetch`: an HTTP request as an operation of the calling task — Node's own
 * `fetch` (undici), aborted when the task is cancelled or its `timeout`
 * passes, its body read by operations. In `@bobbin/sim`, whose network
 * undici cannot reach, the request goes over the simulated network instead:
 * Node's `http.request` over a `toStream` stream of a simulated socket.
 */
import * as http from "node:http";
import * as net from "node:net";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { describe } from "@bobbin/core/lowlevel";
import { type Backend, close, connect, type Socket, Timeout, tcpv4, tcpv6, toStream, withTimeout } from "@bobbin/unix";

/**
 * Options of {@link fetch}: those of Node's `fetch` (`method`, `headers`,
 * `body`…), without `signal` (the task's cancellation aborts the request),
 * and a `timeout`.
 *
 * @example
 * ```ts
 * const res = yield* fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}", timeout: 5 });
 * ```
 */
export interface FetchOptions extends Omit<RequestInit, "signal"> {
  /** Seconds for the whole exchange, the response's body included; past it the request is aborted and `Timeout` thrown. */
  readonly timeout?: number | undefined;
}

/**
 * What {@link fetch} returns once the response's head has come: its status
 * and headers, and operations that read its body (once). `Disposable`:
 * disposing a response whose body was not read aborts it (`using res =
 * yield* fetch(…)`).
 *
 * @example
 * ```ts
 * const res = yield* fetch("http://127.0.0.1:8080/items/7");
 * if (res.status === 404) return null;
 * return yield* res.json<Item>();
 * ```
 */
export interface FetchResponse extends Disposable {
  readonly status: number;
  readonly statusText: string;
  /** Whether the status is 200–299. */
  readonly ok: boolean;
  readonly url: string;
  readonly headers: Headers;
  /**
   * The body, as bytes.
   * @throws the connection's error; `Timeout`; `Cancelled`; TypeError when the body was read already.
   */
  bytes(): Generator<B.Instruction, Buffer, unknown>;
  /**
   * The body, as UTF-8 text.
   * @throws as `bytes`.
   */
  text(): Generator<B.Instruction, string, unknown>;
  /**
   * The body, parsed as JSON.
   * @throws SyntaxError when it is not JSON; as `bytes`.
   */
  json<T = unknown>(): Generator<B.Instruction, T, unknown>;
}

/** When a fetch's `timeout` passes (a moment of the run's clock, in ms) and that timeout (s); or none. */
type Deadline = { readonly at: number; readonly seconds: number } | undefined;

function deadlineOf(timeout: number | undefined): Deadline {
  return timeout === undefined ? undefined : { at: performance.now() + timeout * 1000, seconds: timeout };
}

/** The `source` of a fetch's Timeout. */
const SOURCE = "fetch's timeout";

/**
 * `op` within what is left of `deadline`: once it passed, a `Timeout` that
 * says the fetch's `timeout` (the scope's own says what was left of it). A
 * Timeout of another source (an enclosing `withTimeout`'s, or one `op`
 * threw) goes on as it is.
 */
function* within<T>(deadline: Deadline, op: B.Operation<T>): Generator<B.Instruction, T, unknown> {
  if (deadline === undefined) return yield* op;
  const left = Math.max(0, (deadline.at - performance.now()) / 1000);
  try {
    return yield* withTimeout(left, op, SOURCE);
  } catch (error) {
    if (error instanceof Timeout && error.source === SOURCE) throw new Timeout(deadline.seconds, SOURCE);
    throw error;
  }
}

/** Aborts `controller` when `signal` aborts (the task was cancelled, or timed out). */
function follow(signal: AbortSignal, controller: AbortController): void {
  signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
}

/**
 * Sends a request and returns once its response's head has come, as an
 * operation of the calling task: cancelling the task aborts the request (or
 * the reading of its body); `timeout` (seconds) bounds the whole exchange.
 * Over Node's global `fetch` (undici: its connection pool, redirects,
 * `https:`); in `@bobbin/sim` it goes over the simulated network instead (see
 * the README: `http:` only, one connection per request, the body read before
 * `fetch` returns).
 *
 * @example
 * ```ts
 * import { fetch } from "@bobbin/http";
 * import { run } from "@bobbin/unix";
 *
 * await run(function* () {
 *   const res = yield* fetch("https://example.com/", { timeout: 10 });
 *   console.log(res.status, (yield* res.text()).length);
 * });
 * ```
 * @throws TypeError for a bad URL or options (at once), and Node's fetch errors (`TypeError: fetch failed`, its `cause` the connection's error).
 * @throws Timeout (`ETIMEDOUT`) when `timeout` passes.
 * @throws Cancelled when the task is cancelled while it waits (the request is aborted).
 */
export function fetch(url: string | URL, init: FetchOptions = {}): B.Operation<FetchResponse> {
  const target = toUrl(url);
  if (init === null || typeof init !== "object")
    throw new TypeError(`fetch(url, init) expects options { method, headers, body, timeout }, got ${describe(init)}`);
  if ("signal" in init && init.signal !== undefined) {
    throw new TypeError("fetch(url, { signal }): a fetch is aborted by cancelling its task (or by its timeout): leave the signal out");
  }
  const { timeout, ...rest } = init;
  if (timeout !== undefined && (typeof timeout !== "number" || Number.isNaN(timeout) || timeout < 0)) {
    throw new RangeError(`fetch(url, { timeout }): timeout must be a number of seconds ≥ 0, got ${describe(timeout)}`);
  }
  return (L.currentEvents() as Backend | null)?.services?.network === "sockets"
    ? fetchOverSockets(target, rest, timeout)
    : fetchWithNode(target, rest, timeout);
}

function toUrl(url: unknown): URL {
  if (url instanceof URL) return url;
  if (typeof url !== "string") throw new TypeError(`fetch(url) expects a URL or a string, got ${describe(url)}`);
  try {
    return new URL(url);
  } catch (error) {
    throw new TypeError(`fetch(url): ${JSON.stringify(url)} is not an absolute URL`, { cause: error });
  }
}

function* fetchWithNode(url: URL, init: RequestInit, timeout: number | undefined): Generator<B.Instruction, FetchResponse, unknown> {
  const deadline = deadlineOf(timeout);
  const controller = new AbortController();
  const response = yield* within(
    deadline,
    B.promise((signal) => {
      follow(signal, controller);
      return globalThis.fetch(url, { ...init, signal: controller.signal });
    }),
  );
  const read = (): B.Operation<Buffer> =>
    within(
      deadline,
      B.promise(async (signal) => {
        follow(signal, controller);
        return Buffer.from(await response.arrayBuffer());
      }),
    );
  return new Answer(response.status, response.statusText, response.url, response.headers, read, () => controller.abort());
}

/** A response: its head, and its body read once, by `read` (what aborting it takes: `abort`). */
class Answer implements FetchResponse {
  private used = false;

  constructor(
    readonly status: number,
    readonly statusText: string,
    readonly url: string,
    readonly headers: Headers,
    private readonly read: () => B.Operation<Buffer>,
    private readonly abort: () => void,
  ) {}

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  *bytes(): Generator<B.Instruction, Buffer, unknown> {
    if (this.used) throw new TypeError("the response's body was read already: read it once (bytes, text or json)");
    this.used = true;
    return yield* this.read();
  }

  *text(): Generator<B.Instruction, string, unknown> {
    return (yield* this.bytes()).toString("utf8");
  }

  *json<T = unknown>(): Generator<B.Instruction, T, unknown> {
    return JSON.parse(yield* this.text()) as T;
  }

  [Symbol.dispose](): void {
    if (this.used) return;
    this.used = true;
    this.abort();
  }
}

/** The head and the whole body of a response that came over the simulated network. */
interface Received {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  readonly body: Buffer;
}

/**
 * The request over a socket of the run's backend: Node's `http.request`
 * over a `toStream` stream, one connection per request (`connection:
 * close`), the whole body read before returning, so that the connection and
 * its pumping task end here.
 */
function* fetchOverSockets(url: URL, init: RequestInit, timeout: number | undefined): Generator<B.Instruction, FetchResponse, unknown> {
  if (url.protocol !== "http:") {
    throw new TypeError(`fetch(): over the simulated network only http: URLs are served (no TLS), got ${url.protocol}`);
  }
  const body = bodyBytes(init.body);
  const deadline = deadlineOf(timeout);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const sock: Socket = net.isIP(host) === 6 ? tcpv6() : tcpv4();
  try {
    yield* within(deadline, connect(sock, { host, port: Number(url.port || 80) }));
  } catch (error) {
    yield* close(sock);
    throw error;
  }
  const stream = toStream(sock);
  try {
    const received = yield* within(
      deadline,
      B.promise((signal) => exchange(stream, url, init, body, signal)),
    );
    return new Answer(
      received.status,
      received.statusText,
      url.href,
      received.headers,
      () => L.done(received.body),
      () => {},
    );
  } finally {
    stream.destroy();
    yield* B.awaitExn(stream.task);
  }
}

function bodyBytes(body: RequestInit["body"]): Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), "utf8");
  throw new TypeError(
    `fetch(url, { body }): over the simulated network a body is a string, bytes or URLSearchParams, got ${describe(body)}`,
  );
}

function exchange(
  stream: NodeJS.ReadWriteStream,
  url: URL,
  init: RequestInit,
  body: Uint8Array | undefined,
  signal: AbortSignal,
): Promise<Received> {
  return new Promise<Received>((resolve, reject) => {
    const headers: Record<string, string> = { connection: "close" };
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    if (body !== undefined) headers["content-length"] = String(body.length);
    const req = http.request(
      {
        method: init.method ?? "GET",
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        headers,
        createConnection: () => stream as never,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const received = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) received.append(name, v);
          }
          resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? "", headers: received, body: Buffer.concat(chunks) });
        });
      },
    );
    req.on("error", reject);
    signal.addEventListener("abort", () => req.destroy(signal.reason as Error), { once: true });
    req.end(body);
  });
}
