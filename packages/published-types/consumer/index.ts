/**
 * A user's program against the published packages: an echo server with a
 * connection limit, a shared counter, a graceful stop on SIGINT, the native
 * backend when its addon loads, and a crawler (a group of workers fed by a
 * channel, a broadcast, select, the combinators). It is only type-checked (never run):
 * what matters is that every import resolves to a published declaration and
 * that the public surface is enough to write it.
 */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import * as H from "@bobbin/http";
import { nativeAvailable, nativeBackend } from "@bobbin/native-poll";
import { loadNative, type NativeInfo, type Address as RawAddress, syscalls } from "@bobbin/native-poll/backend";
import { INSTRUMENTS, type InstrumentOptions, instrument, measureTasks, traceTasks } from "@bobbin/opentelemetry";
import { type Build, CheckFailed, check, type LinkOptions, replay, Sim, SimDeadlock, simulated, type Trace } from "@bobbin/sim";
import { Broadcast, Channel, Condition, END, Mutex, MVar, Ownership, type Resource, Semaphore } from "@bobbin/sync";
import * as U from "@bobbin/unix";
import * as K from "@bobbin/unix/backend";
import { activeHandles, type ConformanceOptions, conformance, leaked } from "@bobbin/unix/conformance";
import { metrics, trace } from "@opentelemetry/api";

const limit = new Semaphore(64);
const served = MVar.of(0);
const stats = new Mutex();
const stopped = new Condition();

function* echo(client: U.Socket): Generator<B.Instruction, void, unknown> {
  const buf = Buffer.alloc(4096);
  try {
    for (let n = yield* U.read(client, buf); n > 0; n = yield* U.read(client, buf)) yield* U.write(client, buf, 0, n);
    yield* stats.protect(function* () {
      yield* served.put((yield* served.take()) + 1);
    });
  } finally {
    yield* U.close(client);
    limit.release();
  }
}

function* serve(address: U.Address): Generator<B.Instruction, number, unknown> {
  const server = U.tcpv4();
  yield* U.bindAndListen(server, address, { backlog: 128, reuseAddr: true });
  const clients = B.orphans<void>();
  const stop = U.onSignal("SIGINT", function* () {
    yield* stats.lock();
    stopped.broadcast();
    stats.unlock();
  });
  try {
    for (;;) {
      for (let t = B.care(clients); t; t = B.care(clients)) yield* B.awaitTask(t);
      yield* limit.acquire();
      const [client, peer]: [U.Socket, U.Address] = yield* U.withTimeout(30, U.accept(server));
      void peer;
      B.spawn({ orphans: clients }, echo, client);
    }
  } catch (error) {
    if (!(error instanceof U.Timeout)) throw error;
    return yield* served.read();
  } finally {
    stop();
    yield* U.close(server);
  }
}

const resource = (): B.Operation<Resource<number>> => {
  const op: B.Operation<Resource<number>> = {
    *[Symbol.iterator]() {
      yield* B.yieldNow();
      return Ownership.create(1, () => {});
    },
  };
  return op;
};

export async function main(port: number): Promise<number> {
  const info: NativeInfo | undefined = nativeAvailable() ? loadNative() : undefined;
  if (info !== undefined) console.log(`native backend on ${info.mechanism}`);
  const raw: RawAddress = { host: "127.0.0.1", port };
  const fd: number = syscalls.socket("tcp4");
  if (fd >= 0) syscalls.close(fd);
  return U.run(
    function* () {
      const owned = yield* resource();
      Ownership.release(owned);
      const started = new L.Trigger();
      const waiter = B.spawn(function* () {
        yield* started.wait();
      });
      started.signal();
      yield* B.awaitExn(waiter);
      const task: B.Task<number> = B.spawn(serve, raw);
      const result: B.Result<number> = yield* B.awaitTask(task);
      if (!result.ok) throw result.error;
      return result.value;
    },
    info === undefined ? {} : { backend: nativeBackend },
  );
}

/** A backend author's vitest file, as @bobbin/unix's README shows it: the published conformance suite. */
export function backendConformance(): void {
  const options: ConformanceOptions = {
    childProcess: { module: new URL("./backend.js", import.meta.url).href, export: "nativeBackend", execArgv: [] },
    systemSockets: true,
    soak: { connections: 100, seed: 1 },
  };
  conformance("native", nativeBackend, options);
  const more: Record<string, number> = leaked(activeHandles(), activeHandles());
  void more;
}

/** A backend author's socket and operation, from the kit (as the tutorial writes them): a queue of messages a task takes. */
export class Inbox extends K.BackendSocket<U.Backend> {
  readonly waiters = new K.WaitQueue();
  readonly messages: Uint8Array[] = [];

  deliver(message: Uint8Array): void {
    this.messages.push(message);
    this.waiters.wakeAll();
  }

  take(): B.Operation<Uint8Array> {
    return new K.PollOp(this, this.waiters, "take", () => this.messages.shift() ?? K.AGAIN);
  }
}

/** A backend author's loop: the events half and the clock of the kit, with a timer of its own. */
export class Clocked extends K.NodeLoop {
  readonly heap = new K.DeadlineHeap();

  constructor() {
    super("immediate");
  }

  later(at: number, fire: () => void): K.Deadline {
    const deadline: K.Deadline = { at, heapIndex: -1, fire };
    this.heap.push(deadline);
    return deadline;
  }
}

/** Fans jobs out to a bounded group of workers over a channel; results come back through a select with a deadline. */
export function* crawl(
  urls: readonly string[],
  fetchPage: (url: string) => B.Operation<string>,
): Generator<B.Instruction, string[], unknown> {
  const jobs = new Channel<string>(16);
  const pages = new Broadcast<string>(64);
  const seen = pages.subscribe();
  const counted = yield* B.group({ limit: 4 }, function* (g) {
    for (let i = 0; i < 4; i++) {
      g.spawn({ name: `worker ${i}` }, function* () {
        for (let url = yield* jobs.recv(); url !== END; url = yield* jobs.recv()) pages.publish(yield* fetchPage(url));
      });
    }
    for (const url of urls) yield* jobs.send(url);
    jobs.close();
    return urls.length;
  });
  pages.close();
  const out: string[] = [];
  for (;;) {
    const r = yield* B.select([seen.recv(), B.timeout(100)]);
    if (r.index === 1 || r.value.done) break;
    out.push(r.value.value);
  }
  const [first, sizes] = yield* B.all([
    B.race([fetchPage(urls[0] ?? ""), B.once<[string]>(process, "message")]),
    B.map(urls, function* (url: string) {
      return (yield* fetchPage(url)).length;
    }),
  ]);
  const total: number = sizes.reduce((a, b) => a + b, 0);
  return counted === out.length ? out : [String(first), String(total)];
}

/** A simulation of the echo server, as @bobbin/sim's README shows it: a world, faults, check and replay. */
export async function simulate(): Promise<string> {
  const build: Build = (sim) => {
    const link: LinkOptions = { latency: { min: 0.001, max: 0.01 }, loss: 0.01 };
    sim.network(link);
    sim.host("server", function* () {
      return yield* serve({ host: "0.0.0.0", port: 7 });
    });
    sim.client("client", function* () {
      sim.partition("client", "server");
      yield* U.sleep(1);
      sim.repair("client", "server");
      return sim.now();
    });
  };
  try {
    await check(build, { runs: 10, policy: "pct", depth: 2 });
  } catch (error) {
    if (error instanceof CheckFailed) await replay(build, error.repro, { trace: true });
    if (error instanceof SimDeadlock) return error.message;
  }
  const sim = new Sim({ seed: 1, trace: true });
  build(sim);
  const results: unknown[] = await sim.run();
  const trace: Trace = sim.trace();
  await U.run(
    function* () {
      yield* U.sleep(3600);
    },
    { backend: simulated({ seed: 1 }) },
  );
  return `${results.length} ${trace.length} ${sim.repro}`;
}

/** An HTTP service as @bobbin/http's README shows it: a JSON store behind a deadline and a limit, and a proxy through fetch. */
export function* httpService(port: number, upstream: string): Generator<B.Instruction, void, unknown> {
  const items = new Map<string, { readonly name: string }>();
  const options: H.ServeOptions = {
    port,
    deadline: 5,
    limit: 100,
    grace: 2,
    bodyLimit: 64 * 1024,
    onError: (error, req) => console.error(req.url, error),
  };
  yield* H.serve(options, function* (req: H.Request, res: H.Response) {
    const id = req.url?.slice("/items/".length) ?? "";
    if (req.method === "PUT") {
      items.set(id, yield* req.json<{ name: string }>());
      yield* res.send(null, { status: 204 });
    } else if (req.url === "/upstream") {
      using answer: H.FetchResponse = yield* H.fetch(upstream, { timeout: 2 });
      yield* res.send(yield* answer.bytes(), {
        status: answer.status,
        headers: { "content-type": answer.headers.get("content-type") ?? "text/plain" },
      });
    } else {
      const item = items.get(id);
      if (item === undefined) throw new H.HttpError(404, `no item ${id}`);
      yield* res.send(item);
    }
  });
}

/** Tracing and metrics as @bobbin/opentelemetry's README shows them, and the flight recorder as a Chrome trace. */
export async function observed(main: () => Generator<B.Instruction, void, unknown>): Promise<B.ChromeTrace> {
  const options: InstrumentOptions = {
    tracer: trace.getTracer("svc"),
    meter: metrics.getMeter("svc"),
    filter: (t) => t.name !== "anonymous",
  };
  const stop = instrument(options);
  const stopSpans = traceTasks(trace.getTracer("other"));
  const stopMetrics = measureTasks(metrics.getMeter("other"));
  try {
    const dump = await B.run(
      function* () {
        yield* main();
        yield* B.yieldIfDue();
        return yield* B.promise(() => B.dump());
      },
      { flightRecorder: 10_000, blockingMs: 100 },
    );
    const loads: readonly B.DomainStats[] = B.stats();
    const lines: string[] = dump.flight.flatMap((f: B.DomainFlight) => B.formatFlight(f));
    console.log(INSTRUMENTS.blocked, loads.length, lines.length);
    return B.chromeTrace(dump);
  } finally {
    stop();
    stopSpans();
    stopMetrics();
  }
}
