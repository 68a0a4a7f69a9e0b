/**
 * The HTTP JSON service (`../http/service.ts`) in a simulated world
 * (`@bobbin/sim`), its code unchanged: the service on a host named `api`,
 * the quote service it fetches from on `quotes`, clients on other hosts,
 * and a chaos host that partitions links, resets connections, and crashes
 * and restarts the service — every choice drawn from the world's seed.
 *
 * Each client works on keys of its own and checks what the service
 * promises under faults: an item it stored is read back unchanged from the
 * same incarnation of the service (`x-boot`; a restarted service starts
 * empty, and answers 404); a quote is the quote asked for, or a 502 when
 * the quote service is out of reach; a slow request it gives up on is
 * cancelled on the service's side. Requests that fail on the way (a reset,
 * a partition that outlasts the client's timeout, a crashed service) are
 * tried again. The last client out checks that no handler of the service
 * failed.
 */
import type * as B from "@bobbin/core";
import { fetch } from "@bobbin/http";
import type { Sim } from "@bobbin/sim";
import { sleep, Timeout } from "@bobbin/unix";
import { quote, quoteService } from "../http/quotes.js";
import { jsonService, newStats, type ServiceStats } from "../http/service.js";

/** Options of {@link httpWorld}. */
export interface HttpWorldOptions {
  /** How many client hosts (default 3). */
  readonly clients?: number;
  /** How many operations each client makes (default 12). */
  readonly operations?: number;
  /** Whether the chaos host breaks things (default true). */
  readonly chaos?: boolean;
}

/** What a client saw. */
export interface HttpClientReport {
  /** Items stored, and read back unchanged (or gone with a restart). */
  stored: number;
  checked: number;
  /** Quotes received (each the one asked for), and 502s while the quote service was out of reach. */
  quotes: number;
  badGateways: number;
  /** Slow requests this client gave up on (its timeout passed). */
  abandoned: number;
  /** Requests that failed on the way and were tried again. */
  retried: number;
}

/** What the world reports once `sim.run()` is over. */
export interface HttpWorld {
  readonly clients: Map<string, HttpClientReport>;
  /** The service's counters, one per incarnation (a restart starts afresh). */
  readonly services: ServiceStats[];
  readonly chaos: { partitions: number; resets: number; crashes: number };
}

export const API_PORT = 8080;
export const QUOTES_PORT = 4000;

/** Whether a request failed on the way (and may be tried again), rather than being answered. */
function lost(error: unknown): boolean {
  if (error instanceof Timeout) return true;
  const code = ((error as { code?: unknown } | null)?.code ?? (error as { cause?: { code?: unknown } } | null)?.cause?.code) as
    | string
    | undefined;
  return (
    code === "ECONNRESET" || code === "ECONNREFUSED" || code === "EPIPE" || code === "ETIMEDOUT" || code === "ERR_STREAM_PREMATURE_CLOSE"
  );
}

/** An answer: its status, the service's boot id, and its body (JSON, or text). */
interface Answer {
  readonly status: number;
  readonly boot: string | null;
  readonly body: unknown;
}

/** Asks until answered, trying again after a request lost on the way (or refused by a service that stops: 503). */
function* ask(
  report: HttpClientReport,
  path: string,
  init: { method?: string; body?: string; timeout?: number } = {},
): Generator<B.Instruction, Answer, unknown> {
  for (;;) {
    try {
      const res = yield* fetch(`http://api:${API_PORT}${path}`, { timeout: 2, ...init });
      const text = yield* res.text();
      if (res.status === 503) throw new Timeout(0);
      const json = res.headers.get("content-type")?.startsWith("application/json") === true;
      return { status: res.status, boot: res.headers.get("x-boot"), body: json ? JSON.parse(text) : text };
    } catch (error) {
      if (!lost(error)) throw error;
      report.retried++;
      yield* sleep(0.05 + Math.random() * 0.2);
    }
  }
}

/** One client: its own keys, each stored and read back, quotes, and slow requests it gives up on. */
function* client(c: number, operations: number, report: HttpClientReport): Generator<B.Instruction, HttpClientReport, unknown> {
  const written = new Map<string, { readonly value: number; readonly boot: string | null }>();
  for (let op = 0; op < operations; op++) {
    yield* sleep(0.05 + Math.random() * 0.15); // the client thinks
    const dice = Math.random();
    if (dice < 0.4) {
      const key = `c${c}-${op % 4}`;
      const value = Math.floor(Math.random() * 1e9);
      const put = yield* ask(report, `/items/${key}`, { method: "PUT", body: JSON.stringify({ value }) });
      if (put.status !== 200 && put.status !== 201) throw new Error(`client ${c}: PUT ${key} answered ${put.status}`);
      written.set(key, { value, boot: put.boot });
      report.stored++;
    } else if (dice < 0.7 && written.size !== 0) {
      const [key, last] = [...written][Math.floor(Math.random() * written.size)]!;
      const got = yield* ask(report, `/items/${key}`);
      const sameIncarnation = got.boot === last.boot;
      if (sameIncarnation && (got.status !== 200 || (got.body as { value?: unknown }).value !== last.value)) {
        throw new Error(
          `client ${c}: ${key} was stored as ${last.value} in incarnation ${last.boot}, which answered ${got.status} ${JSON.stringify(got.body)}`,
        );
      }
      if (!sameIncarnation && got.status !== 404)
        throw new Error(`client ${c}: a restarted service answered ${got.status} for ${key}, stored before it restarted`);
      report.checked++;
    } else if (dice < 0.9) {
      const n = Math.floor(Math.random() * 100);
      const got = yield* ask(report, `/quote/${n}`);
      if (got.status === 502) report.badGateways++;
      else if (got.status === 200 && JSON.stringify(got.body) === JSON.stringify(quote(n))) report.quotes++;
      else throw new Error(`client ${c}: quote ${n} answered ${got.status} ${JSON.stringify(got.body)}`);
    } else {
      let answered: number;
      try {
        answered = (yield* fetch(`http://api:${API_PORT}/slow?seconds=30`, { timeout: 0.3 })).status;
      } catch (error) {
        if (!lost(error)) throw error;
        report.abandoned++;
        continue;
      }
      if (answered !== 503) throw new Error(`client ${c}: a 30 s request answered ${answered} within 0.3 s`);
    }
  }
  return report;
}

/**
 * Declares the world on `sim`: hosts `quotes` and `api`, client hosts
 * `client1`…, and (unless `chaos: false`) a `chaos` host. Returns the report
 * the run fills in; `sim.run()` resolves with the clients' reports.
 *
 * @example
 * ```ts
 * const sim = new Sim({ seed: 7 });
 * const world = httpWorld(sim, { clients: 3 });
 * await sim.run();
 * console.log(world.clients, world.services, world.chaos);
 * ```
 */
export function httpWorld(sim: Sim, opts: HttpWorldOptions = {}): HttpWorld {
  const options: Required<HttpWorldOptions> = { clients: 3, operations: 12, chaos: true, ...opts };
  const world: HttpWorld = { clients: new Map(), services: [], chaos: { partitions: 0, resets: 0, crashes: 0 } };
  let running = options.clients;

  sim.host("quotes", function* () {
    yield* quoteService({ host: "0.0.0.0", port: QUOTES_PORT });
  });
  sim.host("api", function* () {
    const stats = newStats();
    world.services.push(stats);
    yield* jsonService(
      { host: "0.0.0.0", port: API_PORT, upstream: `http://quotes:${QUOTES_PORT}`, upstreamTimeout: 1, grace: 1, deadline: 60 },
      stats,
    );
  });
  for (let c = 1; c <= options.clients; c++) {
    const report: HttpClientReport = { stored: 0, checked: 0, quotes: 0, badGateways: 0, abandoned: 0, retried: 0 };
    world.clients.set(`client${c}`, report);
    sim.client(`client${c}`, function* () {
      yield* client(c, options.operations, report);
      // The last client out checks the service's side: no handler failed (each would have answered 500).
      if (--running === 0) {
        const errors = world.services.flatMap((stats) => stats.errors);
        if (errors.length !== 0) throw new AggregateError(errors, `${errors.length} handler(s) of the service failed`);
      }
      return report;
    });
  }
  if (options.chaos) {
    sim.host("chaos", function* chaos() {
      while (running > 0) {
        yield* sleep(0.1 + Math.random() * 0.5);
        if (running === 0) break;
        const dice = Math.random();
        const victim = dice < 0.5 ? `client${1 + Math.floor(Math.random() * options.clients)}` : "quotes";
        if (dice < 0.35 || (dice >= 0.5 && dice < 0.7)) {
          world.chaos.partitions++;
          sim.partition(victim, "api");
          yield* sleep(Math.random() * 3);
          sim.repair(victim, "api");
        } else if (dice < 0.85) {
          world.chaos.resets++;
          sim.reset(victim, "api");
        } else {
          world.chaos.crashes++;
          sim.crash("api");
          yield* sleep(Math.random());
          sim.restart("api");
        }
      }
    });
  }
  return world;
}
