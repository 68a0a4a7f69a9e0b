/**
 * An HTTP JSON service on `@bobbin/http`: a small in-memory store of items,
 * a slow endpoint that a client who leaves cancels, and a proxy endpoint
 * that fetches from another service. Each request runs as a task; when the
 * service is cancelled (Ctrl-C under `main`), `serve` stops taking
 * connections and lets the requests in flight finish first.
 *
 * | route | |
 * |---|---|
 * | `GET /items` | every item, by id |
 * | `GET /items/:id` | one item (404 when there is none) |
 * | `PUT /items/:id` | stores the JSON body as the item (201 when new, 200 when replaced) |
 * | `DELETE /items/:id` | removes it (204; 404 when there is none) |
 * | `GET /slow?seconds=s` | answers after `s` seconds; a client that leaves first cancels it |
 * | `GET /quote/:n` | quote `n`, fetched from the quote service (502 when it does not answer) |
 *
 * Every answer carries `x-boot`: the service's boot id, drawn when it
 * starts (so a client can tell a restarted service, whose store is empty).
 */
import * as B from "@bobbin/core";
import { fetch, HttpError, type ListeningAddress, type Request, type Response, serve } from "@bobbin/http";
import { sleep } from "@bobbin/unix";

/** What the service counts, for its report and its tests. */
export interface ServiceStats {
  /** Requests its handler ran for. */
  requests: number;
  /** Slow requests cancelled before they answered (their client left, or the deadline passed). */
  slowCancelled: number;
  /** Quote requests the quote service did not answer. */
  upstreamFailures: number;
  /** What its handlers threw that was not an answer (a bug): each was answered 500. */
  readonly errors: unknown[];
}

/** Options of {@link jsonService}. */
export interface ServiceOptions {
  readonly host?: string;
  readonly port: number;
  /** The quote service's base URL (`http://host:port`). */
  readonly upstream: string;
  readonly onListening?: (address: ListeningAddress) => void;
  /** `serve`'s deadline, limit and grace (seconds; default: 10, 1000 requests, 5). */
  readonly deadline?: number;
  readonly limit?: number;
  readonly grace?: number;
  /** Seconds a quote may take (default 2). */
  readonly upstreamTimeout?: number;
}

/**
 * Fresh counters.
 *
 * @example
 * ```ts
 * const stats = newStats();
 * ```
 */
export function newStats(): ServiceStats {
  return { requests: 0, slowCancelled: 0, upstreamFailures: 0, errors: [] };
}

/** The longest wait `/slow` accepts, in seconds. */
const SLOWEST = 60;

/**
 * Serves the JSON service until cancelled, counting into `stats`.
 *
 * @example
 * ```ts
 * yield* jsonService({ port: 8080, upstream: "http://127.0.0.1:8081" }, newStats());
 * ```
 * @throws the listen's error (`EADDRINUSE`…).
 */
export function* jsonService(options: ServiceOptions, stats: ServiceStats): Generator<B.Instruction, void, unknown> {
  const items = new Map<string, unknown>();
  const boot = Math.random().toString(36).slice(2, 10);
  const upstreamTimeout = options.upstreamTimeout ?? 2;
  yield* serve(
    {
      host: options.host ?? "127.0.0.1",
      port: options.port,
      deadline: options.deadline ?? 10,
      limit: options.limit ?? 1000,
      grace: options.grace ?? 5,
      onListening: options.onListening,
      onError: (error) => void stats.errors.push(error),
    },
    function* api(req, res) {
      stats.requests++;
      res.setHeader("x-boot", boot);
      const url = new URL(req.url ?? "/", "http://service");
      const [, resource, id, ...rest] = url.pathname.split("/");
      if (resource === "items" && rest.length === 0) return yield* item(req, res, items, id);
      if (resource === "slow" && id === undefined) return yield* slow(res, url.searchParams.get("seconds"), stats);
      if (resource === "quote" && id !== undefined && rest.length === 0)
        return yield* proxy(res, options.upstream, id, upstreamTimeout, stats);
      throw new HttpError(404, `no ${req.method} ${url.pathname} here`);
    },
  );
}

/** The store: `GET /items`, `GET`/`PUT`/`DELETE /items/:id`. */
function* item(req: Request, res: Response, items: Map<string, unknown>, id: string | undefined): Generator<B.Instruction, void, unknown> {
  if (id === undefined || id === "") {
    if (req.method !== "GET") throw new HttpError(405, "GET /items lists them; an item is /items/:id", { headers: { allow: "GET" } });
    return yield* res.send(Object.fromEntries(items));
  }
  switch (req.method) {
    case "GET": {
      if (!items.has(id)) throw new HttpError(404, `no item ${id}`);
      return yield* res.send(items.get(id));
    }
    case "PUT": {
      const value = yield* req.json();
      const created = !items.has(id);
      items.set(id, value);
      return yield* res.send(value, { status: created ? 201 : 200 });
    }
    case "DELETE": {
      if (!items.delete(id)) throw new HttpError(404, `no item ${id}`);
      return yield* res.send(null, { status: 204 });
    }
    default:
      throw new HttpError(405, `${req.method} is not for items: GET, PUT or DELETE`, { headers: { allow: "GET, PUT, DELETE" } });
  }
}

/** `GET /slow?seconds=s`: answers after `s` seconds, unless cancelled first (its client left, or the deadline passed). */
function* slow(res: Response, seconds: string | null, stats: ServiceStats): Generator<B.Instruction, void, unknown> {
  const s = Number(seconds ?? "1");
  if (!(s >= 0 && s <= SLOWEST)) throw new HttpError(400, `seconds must be a number from 0 to ${SLOWEST}, got ${seconds}`);
  try {
    yield* sleep(s);
  } catch (error) {
    if (error instanceof B.Cancelled) stats.slowCancelled++;
    throw error;
  }
  yield* res.send({ waited: s });
}

/** `GET /quote/:n`: the quote service's answer, relayed (502 when it does not answer in time). */
function* proxy(res: Response, upstream: string, n: string, timeout: number, stats: ServiceStats): Generator<B.Instruction, void, unknown> {
  if (!/^\d+$/.test(n)) throw new HttpError(400, `a quote's number is an integer ≥ 0, got ${n}`);
  let status: number;
  let body: unknown;
  try {
    const answer = yield* fetch(`${upstream}/quotes/${n}`, { timeout });
    status = answer.status;
    body = yield* answer.json();
  } catch (error) {
    if (error instanceof B.Cancelled) throw error;
    stats.upstreamFailures++;
    throw new HttpError(502, `the quote service did not answer: ${(error as Error).message}`, { cause: error });
  }
  yield* res.send(body, { status });
}
