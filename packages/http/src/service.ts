/**
 * What a running `serve` is made of: its settings, the requests in flight,
 * and how it stops. Node's HTTP server hands each request over in a callback;
 * the service answers it at once (503) when it is over its limit or
 * stopping, and otherwise queues it for the server's task, which spawns
 * it into the server's group as a task: an exchange, which runs the handler
 * as a child and cancels it when the client leaves or the deadline passes.
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
  /** The requests that came and wait for their task: `[req, res]` pairs, flat. */
  private queue: (Request | Response)[] = [];
  /** Whether requests are taken (between `open` and `close`). */
  private taking = false;
  /** Where the spawner waits for requests. */
  private readonly arrivals = new Wakeup();
  /** Where `serve` waits for a stop, or for the last request in flight. */
  private readonly wake = new Wakeup();

  constructor(readonly settings: Settings) {}

  get bodyLimit(): number {
    return this.settings.bodyLimit;
  }

  /** Requests are taken from now on (queued for {@link Service.spawnRequests}). */
  open(): void {
    this.taking = true;
  }

  /** No request is taken any more: those still queued are cut (their connection destroyed). */
  close(): void {
    this.taking = false;
    const queue = this.queue;
    this.queue = [];
    for (let i = 0; i < queue.length; i += 2) this.cut(queue[i + 1] as Response);
  }

  /** Spawns each request that comes into `g` as a task, until cancelled. Node's callbacks only queue them: one wake per batch. */
  *spawnRequests(g: B.Group): Generator<B.Instruction, never, unknown> {
    for (;;) {
      while (this.queue.length === 0) yield* this.arrivals.wait();
      const queue = this.queue;
      this.queue = [];
      for (let i = 0; i < queue.length; i += 2) g.spawn({ name: "exchange" }, served, this, queue[i] as Request, queue[i + 1] as Response);
    }
  }

  /** Node's server has a request. */
  readonly onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (this.stopping || this.failure !== null || !this.taking) {
      refuse(res, true);
      return;
    }
    if (this.inFlight >= this.settings.limit) {
      refuse(res, false);
      return;
    }
    this.inFlight++;
    this.queue.push(req as Request, res as Response);
    this.arrivals.signal();
  };

  /** A request that ended without an answer (cancelled with the server): its connection is cut. */
  cut(res: Response): void {
    if (!res.writableEnded) res.destroy();
    this.ended();
  }

  /** A request's task is over. */
  ended(): void {
    this.inFlight--;
    if (this.stopping) {
      this.closeIdle();
      if (this.inFlight === 0) this.wake.signal();
    }
  }

  /** Stops the server: no request is taken any more. */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.wake.signal();
  }

  /** The server fails with `error` (the first one wins) and stops at once. */
  fail(error: unknown): void {
    if (this.failure === null) this.failure = { error };
    this.stop();
    this.wake.signal();
  }

  /** Waits until the server is told to stop. */
  *untilStopped(): Generator<B.Instruction, void, unknown> {
    while (!this.stopping) yield* this.wake.wait();
  }

  /** Waits until no request is in flight (or the server fails). */
  *drained(): Generator<B.Instruction, void, unknown> {
    while (this.inFlight !== 0 && this.failure === null) yield* this.wake.wait();
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

/**
 * One task's wait for news from Node's callbacks: the waiter checks what it
 * waits for before each wait (`while (!ready()) yield* w.wait();`), so a
 * signal that finds it running only lets one more check through. The task
 * parks on itself (`L.park`): nothing is made per wait.
 */
class Wakeup {
  private waiter: B.Task<unknown> | null = null;

  signal(): void {
    if (this.waiter !== null) L.unpark(this.waiter);
  }

  *wait(): Generator<B.Instruction, void, unknown> {
    this.waiter = B.self();
    try {
      yield* L.park();
    } finally {
      this.waiter = null;
    }
  }
}

/** Answers at once: 503, and the connection closes when the server stops. */
function refuse(res: http.ServerResponse, closing: boolean): void {
  if (closing) res.shouldKeepAlive = false;
  res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "retry-after": "1" }).end("Service Unavailable\n");
}

/** The task of one request: its exchange, whose failure (a bug of ours, or `onError`'s) fails the server. */
function* served(service: Service, req: Request, res: Response): Generator<B.Instruction, void, unknown> {
  try {
    yield* exchange(service, req, res);
    // An answer of ours (an error's, or the end of a body) may still be on its way to the connection:
    // the request is over once it was handed over (closing idle connections meanwhile would cut it).
    if (!res.writableFinished && !res.destroyed) yield* B.once(res, "close");
  } catch (error) {
    // Cancelled with the server (its grace is over): the request is cut, and the task stays cancelled.
    if (error instanceof B.Cancelled) {
      service.cut(res);
      throw error;
    }
    service.fail(error);
    service.cut(res);
    return;
  }
  service.ended();
}

/**
 * One request, as a task: the handler runs as its child; it is stopped
 * (cancelled, its cleanup awaited) when the client leaves before the
 * response was sent, when the deadline passes (then answered 504), or when
 * the server's cancellation reaches the exchange (its grace is over: the
 * exchange then ends cancelled); its failure, however it ended, is
 * {@link failed}'s to settle.
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
    // Its client left, its deadline passed, or the server's grace is over (Cancelled).
    res.off("close", onClose);
    const stopped = yield* stopHandler(worker);
    if (error instanceof Timeout) answer(res, 504, "Gateway Timeout: the request's deadline passed\n");
    if (stopped.failure !== NO_FAILURE) failed(service, req, res, stopped.failure);
    const cancelled = stopped.cancelled ?? (error === CLIENT_GONE || error instanceof Timeout ? null : error);
    if (cancelled !== null) throw cancelled;
    return;
  }
  res.off("close", onClose);
  if (!outcome.ok) return failed(service, req, res, outcome.error);
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

/** What a stopped handler's cleanup threw: none. */
const NO_FAILURE = Symbol("no failure");

/**
 * Cancels the handler and waits for its cleanup to end, even when the
 * server's cancellation reaches the exchange meanwhile (its grace is over):
 * the handler's end is settled by the exchange, as every end of a handler is,
 * never left to the tree (where a cleanup's error would fail the whole
 * server). Returns what the cleanup threw, if it did, and that cancellation,
 * for the exchange to end with once the handler's end is settled.
 */
function* stopHandler(worker: B.Task<void>): Generator<B.Instruction, { failure: unknown; cancelled: B.Cancelled | null }, unknown> {
  let cancelled: B.Cancelled | null = null;
  for (;;) {
    try {
      yield* B.cancel(worker);
      return { failure: NO_FAILURE, cancelled };
    } catch (error) {
      // A cancellation reaches a task once: a second `Cancelled` is the handler's own failure.
      if (!(error instanceof B.Cancelled) || cancelled !== null) return { failure: error, cancelled };
      cancelled = error;
    }
  }
}

/**
 * A handler's failure, in the one place that settles it, however the
 * handler ended (it threw, or its cleanup did once it was stopped): `send`'s
 * error for a client that left (`ECONNRESET`) is the client leaving, with
 * nothing to answer and no bug to report; an `HttpError` is its answer;
 * anything else is answered 500 and reported.
 */
function failed(service: Service, req: Request, res: Response, error: unknown): void {
  if (isClientLeft(error)) return;
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
