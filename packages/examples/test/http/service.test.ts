/** The HTTP JSON service: its routes on each backend, in this process; and the program under main, stopped by SIGINT while a request is in flight. */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { fetch } from "@bobbin/http";
import { delay, procFds, until } from "@bobbin/test-support";
import { run, sleep } from "@bobbin/unix";
import { afterEach, describe, expect, it } from "vitest";
import { quote, quoteService } from "../../src/http/quotes.js";
import { jsonService, newStats, type ServiceStats } from "../../src/http/service.js";
import { connected, hasRead, listensOn } from "../support/net.js";
import { Program } from "../support/processes.js";
import { backends } from "../support/servers.js";

/** One answer, as a test reads it. */
function* ask(url: string, init: Parameters<typeof fetch>[1] = {}): Generator<B.Instruction, [number, unknown], unknown> {
  const res = yield* fetch(url, init);
  const text = yield* res.text();
  return [res.status, res.headers.get("content-type")?.startsWith("application/json") ? JSON.parse(text) : text.trim()];
}

/** Runs the quote service and the JSON service in this run, then `clients(url, stopQuotes)`; cancels both after. */
function* withServices<T>(
  stats: ServiceStats,
  clients: (url: string, stopQuotes: () => B.Operation<void>) => Generator<B.Instruction, T, unknown>,
): Generator<B.Instruction, T, unknown> {
  let quotesPort = 0;
  let port = 0;
  const ready = new L.Trigger();
  const quotesReady = new L.Trigger();
  const quotes = B.spawn(quoteService, {
    port: 0,
    onListening: (a) => {
      quotesPort = a.port;
      quotesReady.signal();
    },
  });
  yield* quotesReady.wait();
  const service = B.spawn(
    jsonService,
    {
      port: 0,
      upstream: `http://127.0.0.1:${quotesPort}`,
      upstreamTimeout: 0.5,
      onListening: (a) => {
        port = a.port;
        ready.signal();
      },
    },
    stats,
  );
  yield* ready.wait();
  try {
    return yield* clients(`http://127.0.0.1:${port}`, () => B.cancel(quotes));
  } finally {
    yield* B.cancel(service);
    if (quotes.status === "pending") yield* B.cancel(quotes);
  }
}

describe("the HTTP JSON service", async () => {
  for (const [name, backend] of await backends()) {
    it(`answers its routes, cancels a slow request whose client left, relays the quote service (502 once it is gone) — ${name}`, async () => {
      const stats = newStats();
      const seen = await run(
        () =>
          withServices(stats, function* (url, stopQuotes) {
            const answers: unknown[] = [];
            answers.push(yield* ask(`${url}/items/spool`, { method: "PUT", body: JSON.stringify({ colour: "red" }) }));
            answers.push(yield* ask(`${url}/items/spool`, { method: "PUT", body: JSON.stringify({ colour: "blue" }) }));
            answers.push(yield* ask(`${url}/items/bobbin`, { method: "PUT", body: "{not json" }));
            answers.push(yield* ask(`${url}/items`));
            answers.push(yield* ask(`${url}/items/spool`, { method: "DELETE" }));
            answers.push(yield* ask(`${url}/items/spool`));
            answers.push(yield* ask(`${url}/quote/3`));
            answers.push(yield* ask(`${url}/slow?seconds=0.01`));
            // A client that gives up on a slow request: its handler is cancelled.
            const impatient = B.spawn(function* () {
              yield* fetch(`${url}/slow?seconds=30`);
            });
            yield* sleep(0.1);
            yield* B.cancel(impatient);
            for (let i = 0; i < 100 && stats.slowCancelled === 0; i++) yield* sleep(0.01);
            yield* stopQuotes();
            answers.push((yield* ask(`${url}/quote/1`))[0]);
            answers.push(yield* ask(`${url}/nowhere`));
            return answers;
          }),
        { backend },
      );
      expect(seen).toEqual([
        [201, { colour: "red" }],
        [200, { colour: "blue" }],
        [400, expect.stringMatching(/^the request's body is not JSON/)],
        [200, { spool: { colour: "blue" } }],
        [204, ""],
        [404, "no item spool"],
        [200, quote(3)],
        [200, { waited: 0.01 }],
        502,
        [404, "no GET /nowhere here"],
      ]);
      expect(stats).toEqual({ requests: 11, slowCancelled: 1, upstreamFailures: 1, errors: [] });
    });
  }
});

describe("node dist/http-service.js under main", () => {
  let program: Program | undefined;
  afterEach(() => program?.kill());

  for (const name of ["libuv", "native"]) {
    it(`SIGINT drains it: the request in flight is answered, a new client is refused, no socket is left, exit 130 — ${name}`, async () => {
      program = Program.start("http-service.js", ["--port", "0", "--grace", "5"], { BOBBIN_BACKEND: name });
      const [, port] = await program.waitFor(/HTTP service on http:\/\/127\.0\.0\.1:(\d+)/);
      const url = `http://127.0.0.1:${port}`;
      expect((await globalThis.fetch(`${url}/items`)).status).toBe(200);
      // The slow request on a connection of its own, so that this test sees when the server has read it.
      const slowSocket = await connected(Number(port));
      const slowAnswer = new Promise<string>((resolve, reject) => {
        let text = "";
        slowSocket.setEncoding("latin1").on("data", (s: string) => (text += s));
        slowSocket.on("end", () => resolve(text)).on("error", reject);
      });
      let slowDone = false;
      const slow = slowAnswer.then((text) => {
        slowDone = true;
        return [Number(text.match(/^HTTP\/1\.1 (\d+)/)?.[1]), JSON.parse(text.match(/\{.*\}/)?.[0] ?? "null")];
      });
      slowSocket.write("GET /slow?seconds=2 HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n");
      // In flight: the server has it (a fixed wait was too short for a loaded machine). Without /proc, a guess.
      const pid = program.child.pid!;
      if (procFds) await until(() => hasRead(pid, slowSocket) === true, { ms: 10_000, what: "the server to read the slow request" });
      else await delay(100);
      program.child.kill("SIGINT");
      // The listener closes at once: while the slow request is still in flight.
      if (procFds) await until(() => listensOn(pid, Number(port)) === false, { ms: 10_000, what: "the listener to close" });
      else await delay(100);
      expect(slowDone, "the listener closed before the request in flight was answered").toBe(false);
      // A new connection, not a fetch: fetch may send on the connection of the first request, which
      // the server closes as idle at SIGINT, before this process has seen it closed (UND_ERR_SOCKET).
      const refused = await connected(Number(port)).then(
        (socket) => void socket.destroy(),
        (e: NodeJS.ErrnoException) => e.code,
      );
      expect(await slow).toEqual([200, { waited: 2 }]);
      const exit = await program.end();
      expect(refused).toBe("ECONNREFUSED");
      expect(exit.code).toBe(130);
      expect(exit.stderr).toBe("");
      expect(exit.stdout).toMatch(/served 2 request\(s\); 0 slow one\(s\) cancelled/);
      expect(exit.stdout).toMatch(/no socket left open/);
    });
  }
});
