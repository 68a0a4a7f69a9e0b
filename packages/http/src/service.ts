/**
 * What a running `serve` is made of: its settings, the requests in flight,
 * and how it stops. Node's HTTP server hands each request over in a callback;
 * the service answers it at once (503) when it is over its limit or
 * stopping, and otherwise runs it as a task through its bridge: an exchange,
 * which runs the handler as a child and cancels it when the client leaves or
 * the deadline passes.
 */
import type * as http from "node:http";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { Timeout, withTimeout } from "@bobbin/unix";
import { HttpError } from "./errors.js";
import type { Request } from "./request.js";
import { isClientLeft, type Response } from "./response.js";
import type { ServerState } from "./server-state.js";

/**
 * A handler of `serve`: a task body per request.
 *
 * @example
 * ```ts
 * const hello: Handler = function* (req, res) {
 *   yield* res.send(`hello ${req.url}`);
 * };
 * ```
 */
export type Handler = (req: Request, res: Response) => Generator<B.Instruction, void, unknown>;

/** @internal What `serve` was told, checked. */
export interface Settings {
  readonly handler: Handler;
  /** Seconds a handler may run (Infinity: no deadline). */
  readonly deadline: number;
  /** How many requests may be in flight (Infinity: no limit). */
  readonly limit: number;
  readonly onError: ((error: unknown, req: Request) => void) | undefined;
  /** The largest body the request's operations read. */
  readonly bodyLimit: number;
}

/** Thrown into an exchange whose client left. */
const CLIENT_GONE = Symbol("the client left");

const noop = (): void => {};

/** @internal See the file comment. */
export class Service implements ServerState {
  /** Requests running (or about to) as tasks. */
  inFlight = 0;
  /** The server stops: new requests are refused, connections close once their response is sent. */
  stopping = false;
  /** The first failure (a handler's error without `onError`, `onError`'s own): the server stops at once and fails. */
  failure: { readonly error: unknown } | null = null;
  /** Closes connections that carry no request (set by the listener). */
  closeIdle: () => void = noop;
  private call: B.Bridge | null = null;
  /** The wait of `serve` for a stop, or for the last request in flight. */
  private wake: L.Trigger | null = null;

  constructor(readonly settings: Settings) {}

  get bodyLimit(): number {
    return this.settings.bodyLimit;
  }

  /** The requests of Node's server run through `call` from now on. */
  open(call: B.Bridge): void {
    this.call = call;
  }

  /** Node's server has a request. */
  readonly onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const call = this.call;
    if (call === null || this.stopping || this.failure !== null) {
      refuse(res, true);
      return;
    }
    if (this.inFlight >= this.settings.limit) {
      refuse(res, false);
      return;
    }
    this.inFlight++;
    call(exchange, this, req as Request, res as Response).then(
      () => this.ended(),
      (error: unknown) => {
        // Cancelled with the server (its grace is over), or refused by a bridge that has closed.
        if (!(error instanceof B.Cancelled || error instanceof B.BridgeClosed)) this.fail(error);
        if (!res.writableEnded) res.destroy();
        this.ended();
      },
    );
  };

  private ended(): void {
    this.inFlight--;
    if (this.stopping) {
      this.closeIdle();
      if (this.inFlight === 0) this.wake?.signal();
    }
  }

  /** Stops the server: no request is taken any more. */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.wake?.signal();
  }

  /** The server fails with `error` (the first one wins) and stops at once. */
  fail(error: unknown): void {
    if (this.failure === null) this.failure = { error };
    this.stop();
    this.wake?.signal();
  }

  /** Waits until the server is told to stop. */
  *untilStopped(): Generator<B.Instruction, void, unknown> {
    while (!this.stopping) yield* this.waitForNews();
  }

  /** Waits until no request is in flight (or the server fails). */
  *drained(): Generator<B.Instruction, void, unknown> {
    while (this.inFlight !== 0 && this.failure === null) yield* this.waitForNews();
  }

  private *waitForNews(): Generator<B.Instruction, void, unknown> {
    this.wake = new L.Trigger();
    try {
      yield* this.wake.wait();
    } finally {
      this.wake = null;
    }
  }

  /** A handler failed with `error` after `res` was answered 500: `onError` hears of it; without one, the server fails. */
  report(error: unknown, req: Request): void {
    const onError = this.settings.onError;
    if (onError === undefined) {
      this.fail(error);
      return;
    }
    try {
      onError(error, req);
    } catch (thrown) {
      this.fail(thrown);
    }
  }
}

/** Answers at once: 503, and the connection closes when the server stops. */
function refuse(res: http.ServerResponse, closing: boolean): void {
  if (closing) res.shouldKeepAlive = false;
  res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "retry-after": "1" }).end("Service Unavailable\n");
}

/**
 * One request, as a task: the handler runs as its child; it is cancelled
 * when the client leaves before the response was sent, or when the
 * deadline passes (then answered 504); its failure is answered (500, or an
 * `HttpError`'s status) and reported.
 */
function* exchange(service: Service, req: Request, res: Response): Generator<B.Instruction, void, unknown> {
  if (res.destroyed) return; // the client left before the request's turn came
  const { handler, deadline } = service.settings;
  const worker = B.spawn(handler, req, res);
  const me = B.self();
  const onClose = (): void => {
    if (!res.writableFinished) L.interrupt(me, CLIENT_GONE);
  };
  res.on("close", onClose);
  let outcome: B.Result<void>;
  try {
    outcome = deadline === Number.POSITIVE_INFINITY ? yield* B.awaitTask(worker) : yield* withTimeout(deadline, B.awaitTask(worker));
  } catch (error) {
    if (error !== CLIENT_GONE && !(error instanceof Timeout)) throw error; // cancelled: the handler is cancelled with us
    yield* B.cancel(worker);
    if (error instanceof Timeout) answer(res, 504, "Gateway Timeout: the request's deadline passed\n");
    return;
  } finally {
    res.off("close", onClose);
  }
  // A send that found the client gone fails its handler before the response's 'close' reaches us: the
  // client left, as when `onClose` interrupts; there is nobody to answer and no bug to report.
  if (!outcome.ok) return isClientLeft(outcome.error) ? undefined : failed(service, req, res, outcome.error);
  if (res.writableEnded) return;
  if (res.headersSent) {
    res.end(); // the handler wrote a body and returned: the response ends here
    return;
  }
  failed(
    service,
    req,
    res,
    new TypeError(`the handler ${worker.name} returned without answering ${req.method} ${req.url}: end the response (yield* res.send(…))`),
  );
}

/** The handler failed: an `HttpError` is its answer; anything else is answered 500 and reported. */
function failed(service: Service, req: Request, res: Response, error: unknown): void {
  if (error instanceof HttpError) {
    answer(res, error.status, `${error.message}\n`, error.headers);
    return;
  }
  answer(res, 500, "Internal Server Error\n");
  service.report(error, req);
}

/** Answers with `status` if nothing was sent yet; otherwise the response cannot be mended: the connection is cut. */
function answer(res: Response, status: number, text: string, headers: http.OutgoingHttpHeaders = {}): void {
  if (res.writableEnded) return;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { ...headers, "content-type": "text/plain; charset=utf-8" }).end(text);
}
