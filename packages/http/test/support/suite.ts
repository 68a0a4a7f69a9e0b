/**
 * The tests of `serve` and `fetch`, run on each backend: libuv (Node's server
 * listens itself), native and io_uring (the backend's sockets and
 * `toStream`), and `@bobbin/sim` (a simulated network, `fetch` over it).
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { failure } from "@bobbin/test-support";
import { close, connect, read, SocketClosed, sleep, Timeout, tcpv4, withTimeout } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { fetch, HttpError, type Response, serve } from "../../src/index.js";
import { type BackendCase, leakFree, type Running, rawRequest, readAll, start } from "./server.js";

/** Answers every request with its method and path. */
function* echoPath(
  req: { method?: string; url?: string },
  res: { send(body?: unknown): B.Operation<void> },
): Generator<B.Instruction, void, unknown> {
  yield* res.send(`${req.method} ${req.url}`);
}

/** What a handler's late send threw. */
interface Sent {
  error: unknown;
}

/** A handler's send after its client left (in its cleanup), keeping what it throws in `sent`. */
function* sendTooLate(res: Response, sent: Sent): Generator<B.Instruction, void, unknown> {
  try {
    yield* res.send("too late");
  } catch (error) {
    sent.error = error;
    throw error;
  }
}

export function serveSuite(backend: BackendCase): void {
  describe(`serve and fetch on ${backend.name}`, () => {
    it("serves requests as tasks: port 0 and onListening, keep-alive, bodies read and sent by operations", async () => {
      const got = await leakFree(backend, function* () {
        const server = yield* start({}, function* (req, res) {
          if (req.url === "/json") {
            const body = yield* req.json<{ n: number }>();
            yield* res.send({ twice: body.n * 2, from: req.socket.remoteAddress }, { status: 201, headers: { "x-served-by": "bobbin" } });
          } else if (req.url === "/bytes") {
            yield* res.send(yield* req.bytes());
          } else {
            yield* echoPath(req, res);
          }
        });
        expect(server.port).toBeGreaterThan(0);
        const a = yield* fetch(`${server.url}/hello?x=1`);
        const first = [a.status, a.headers.get("content-type"), yield* a.text()];
        const b = yield* fetch(`${server.url}/json`, {
          method: "POST",
          body: JSON.stringify({ n: 21 }),
          headers: { "content-type": "application/json" },
        });
        const second = [b.status, b.headers.get("x-served-by"), yield* b.json()];
        const big = Buffer.alloc(300_000, 7);
        const c = yield* fetch(`${server.url}/bytes`, { method: "PUT", body: big });
        const third = (yield* c.bytes()).equals(big);
        yield* B.cancel(server.task);
        return [first, second, third];
      });
      expect(got).toEqual([[200, "text/plain; charset=utf-8", "GET /hello?x=1"], [201, "bobbin", { twice: 42, from: "127.0.0.1" }], true]);
    });

    it("send: text and JSON beyond ASCII go as UTF-8, their content-length counting bytes", async () => {
      const text = "héllo wörld ✓ 🧵";
      const got = await leakFree(backend, function* () {
        const server = yield* start({}, function* (req, res) {
          yield* res.send(req.url === "/json" ? { text } : text);
        });
        const replies: [string | null, string][] = [];
        for (const path of ["/text", "/json"]) {
          const r = yield* fetch(`${server.url}${path}`);
          replies.push([r.headers.get("content-length"), yield* r.text()]);
        }
        yield* B.cancel(server.task);
        return replies;
      });
      const json = JSON.stringify({ text });
      expect(got).toEqual([
        [String(Buffer.byteLength(text)), text],
        [String(Buffer.byteLength(json)), json],
      ]);
    });

    it("a handler is cancelled when its client disconnects: its finally runs, the server still serving", async () => {
      const seen = await leakFree(backend, function* () {
        const entered = new L.Trigger();
        const cleaned = new L.Trigger();
        let caught = "nothing";
        const server = yield* start({}, function* slow() {
          try {
            entered.signal();
            yield* sleep(3600);
          } catch (e) {
            caught = (e as Error).name;
            throw e;
          } finally {
            cleaned.signal();
          }
        });
        const sock = yield* rawRequest(server.port, "GET /slow HTTP/1.1\r\nhost: test\r\n\r\n");
        yield* entered.wait();
        yield* close(sock);
        // Only the client leaving can end the handler's hour of sleep before this bound (a wall-clock bound on
        // how soon it ends fails on a loaded machine, where the close's steps wait for a core).
        yield* withTimeout(10, cleaned.wait());
        yield* B.cancel(server.task);
        return caught;
      });
      expect(seen).toBe("Cancelled");
    });

    it("send honours back-pressure: a client that does not read holds the handler in send", async () => {
      const [whileNotRead, received] = await leakFree(backend, function* () {
        const size = 32 * 1024 * 1024;
        const sent = new L.Trigger();
        const server = yield* start({}, function* (_req, res) {
          yield* res.send(Buffer.alloc(size, 1));
          sent.signal();
        });
        const sock = yield* rawRequest(server.port, "GET /big HTTP/1.1\r\nhost: test\r\nconnection: close\r\n\r\n");
        yield* sleep(0.2);
        const held = !sent.isSignalled;
        const buf = Buffer.alloc(64 * 1024);
        let total = 0;
        for (let n: number; (n = yield* read(sock, buf)) > 0; ) total += n;
        yield* close(sock);
        yield* sent.wait();
        yield* B.cancel(server.task);
        return [held, total > size];
      });
      expect([whileNotRead, received]).toEqual([true, true]);
    });

    it("a handler past its deadline is cancelled and the request answered 504", async () => {
      const [status, finallyRan] = await leakFree(backend, function* () {
        let ran = false;
        const server = yield* start({ deadline: 0.1 }, function* () {
          try {
            yield* sleep(3600);
          } finally {
            ran = true;
          }
        });
        const res = yield* fetch(`${server.url}/late`);
        const answer = [res.status, yield* res.text()];
        yield* B.cancel(server.task);
        return [answer, ran];
      });
      expect(status).toEqual([504, "Gateway Timeout: the request's deadline passed\n"]);
      expect(finallyRan).toBe(true);
    });

    it("past its limit of requests in flight, a request is answered 503 at once", async () => {
      const statuses = await leakFree(backend, function* () {
        const held: L.Trigger[] = [];
        const arrived = new L.Trigger();
        const server = yield* start({ limit: 2 }, function* (_req, res) {
          const release = new L.Trigger();
          if (held.push(release) === 2) arrived.signal();
          yield* release.wait();
          yield* res.send("done");
        });
        const clients = [0, 1].map((i) =>
          B.spawn(function* () {
            const res = yield* fetch(`${server.url}/held/${i}`);
            yield* res.text();
            return res.status;
          }),
        );
        yield* arrived.wait();
        const over = yield* fetch(`${server.url}/over`);
        const refused = [over.status, yield* over.text()];
        for (const release of held) release.signal();
        const done = [];
        for (const t of clients) done.push(yield* B.awaitExn(t));
        yield* B.cancel(server.task);
        return [refused, done];
      });
      expect(statuses).toEqual([
        [503, "Service Unavailable\n"],
        [200, 200],
      ]);
    });

    it("cancelling serve drains it: in-flight requests complete, new connections are refused, no fd is left", async () => {
      const seen = await leakFree(backend, function* () {
        const entered = new L.Trigger();
        const listening = new L.Trigger();
        const stop = new L.Trigger();
        let server: Running | undefined;
        // The server's owner cancels it when told to, while this task goes on as a client.
        const owner = B.spawn(function* () {
          server = yield* start({ grace: 5 }, function* (_req, res) {
            entered.signal();
            yield* sleep(0.2);
            yield* res.send("finished in time");
          });
          listening.signal();
          yield* stop.wait();
          yield* B.cancel(server.task);
          return server.task.status;
        });
        yield* listening.wait();
        const { url, port } = server!;
        const inFlight = B.spawn(function* () {
          const res = yield* fetch(`${url}/slow`);
          return [res.status, res.headers.get("connection"), yield* res.text()];
        });
        yield* entered.wait();
        stop.signal();
        yield* sleep(0.05); // serve has stopped taking connections
        const refused = tcpv4();
        let connectError: NodeJS.ErrnoException | undefined;
        try {
          yield* connect(refused, { host: "127.0.0.1", port });
        } catch (error) {
          connectError = error as NodeJS.ErrnoException;
        }
        yield* close(refused);
        const answer = yield* B.awaitExn(inFlight);
        const status = yield* B.awaitExn(owner);
        return { answer, refused: connectError?.code, status };
      });
      expect(seen).toEqual({ answer: [200, "close", "finished in time"], refused: "ECONNREFUSED", status: "cancelled" });
    });

    it("after the grace period, the requests still in flight are cancelled", async () => {
      const [cleaned, clientSaw] = await leakFree(backend, function* () {
        const entered = new L.Trigger();
        let ran = false;
        const server = yield* start({ grace: 0.1 }, function* stuck() {
          try {
            entered.signal();
            yield* sleep(3600);
          } finally {
            ran = true;
          }
        });
        const sock = yield* rawRequest(server.port, "GET /stuck HTTP/1.1\r\nhost: test\r\n\r\n");
        yield* entered.wait();
        yield* B.cancel(server.task);
        return [ran, yield* readAll(sock)];
      });
      expect(cleaned).toBe(true);
      expect(clientSaw).toBe(""); // the connection closed without an answer
    });

    it("a handler whose cleanup fails once the grace is over is not lost: serve fails with it (no onError)", async () => {
      const got = await leakFree(backend, function* () {
        const entered = new L.Trigger();
        const server = yield* start({ grace: 0.001 }, function* stuck() {
          try {
            entered.signal();
            yield* sleep(3600);
          } finally {
            // biome-ignore lint/correctness/noUnsafeFinally: the cleanup's failure is the point
            throw new Error("cleanup failed");
          }
        });
        const sock = yield* rawRequest(server.port, "GET /stuck HTTP/1.1\r\nhost: test\r\n\r\n");
        yield* entered.wait();
        const error = yield* failure<B.Instruction, Error>(() => B.cancel(server.task));
        return [String(error), (yield* readAll(sock)).split("\r\n")[0]];
      });
      expect(got).toEqual(["Error: cleanup failed", ""]); // its connection was closed with the server
    });

    it("a handler that fails while a cancelled serve drains is not lost: serve fails with it (no onError)", async () => {
      const got = await leakFree(backend, function* () {
        const entered = new L.Trigger();
        const server = yield* start({ grace: 5 }, function* failing() {
          entered.signal();
          yield* sleep(0.05);
          throw new Error("failed while draining");
        });
        const sock = yield* rawRequest(server.port, "GET /late HTTP/1.1\r\nhost: test\r\n\r\n");
        yield* entered.wait();
        const error = yield* failure<B.Instruction, Error>(() => B.cancel(server.task));
        return [String(error), (yield* readAll(sock)).split("\r\n")[0]];
      });
      expect(got).toEqual(["Error: failed while draining", "HTTP/1.1 500 Internal Server Error"]);
    });

    it("stopped by a caller's withTimeout, a serve whose handler then fails throws both: Failures, the Timeout first", async () => {
      const got = await leakFree(backend, function* () {
        let port = 0;
        const listening = new L.Trigger();
        const entered = new L.Trigger();
        const onListening = (address: { port: number }): void => {
          port = address.port;
          listening.signal();
        };
        const timed = B.spawn(function* () {
          const served = serve({ port: 0, grace: 5, onListening }, function* failing() {
            entered.signal();
            yield* sleep(0.3);
            throw new Error("failed while draining");
          });
          return yield* failure<B.Instruction, unknown>(() => withTimeout(0.2, served));
        });
        yield* listening.wait();
        const sock = yield* rawRequest(port, "GET /late HTTP/1.1\r\nhost: test\r\n\r\n");
        yield* entered.wait();
        const error = yield* B.awaitExn(timed);
        yield* readAll(sock);
        return error instanceof B.Failures ? error.errors.map(String) : String(error);
      });
      expect(got).toEqual([expect.stringMatching(/^Timeout: /), "Error: failed while draining"]);
    });

    it("a handler's HttpError is its answer; another error is answered 500 and goes to onError", async () => {
      const got = await leakFree(backend, function* () {
        const reported: unknown[] = [];
        const server = yield* start({ onError: (error, req) => reported.push([String(error), req.url]) }, function* (req, res) {
          if (req.url === "/missing") throw new HttpError(404, "no such thing", { headers: { "x-why": "test" } });
          if (req.url === "/broken") throw new Error("a bug");
          if (req.url === "/silent") return;
          yield* res.send("ok");
        });
        const answers = [];
        for (const path of ["/missing", "/broken", "/silent", "/fine"]) {
          const res = yield* fetch(`${server.url}${path}`);
          answers.push([res.status, yield* res.text()]);
        }
        yield* B.cancel(server.task);
        return { answers, reported };
      });
      expect(got.answers).toEqual([
        [404, "no such thing\n"],
        [500, "Internal Server Error\n"],
        [500, "Internal Server Error\n"],
        [200, "ok"],
      ]);
      expect(got.reported).toEqual([
        ["Error: a bug", "/broken"],
        [expect.stringMatching(/^TypeError: the handler .* returned without answering GET \/silent/), "/silent"],
      ]);
    });

    it("without onError, a handler's failure fails serve, which stops and throws it", async () => {
      const bug = new Error("a bug");
      const outcome = await leakFree(backend, function* () {
        const server = yield* start({}, function* () {
          throw bug;
        });
        const res = yield* fetch(`${server.url}/`);
        const status = res.status;
        yield* res.text();
        const r = yield* B.awaitTask(server.task);
        return [status, r.ok ? "returned" : r.error];
      });
      expect(outcome).toEqual([500, bug]);
    });

    it("a send that finds its client gone fails the handler, not serve: the next request is served", async () => {
      const outcome = await leakFree(backend, function* () {
        const sent = new L.Trigger();
        const server = yield* start({}, function* (req, res) {
          if (req.url === "/gone") {
            // The connection dies while the handler works: its send finds the client gone before
            // the response's 'close' event could tell the server.
            res.destroy();
            try {
              yield* res.send("too late");
            } finally {
              sent.signal();
            }
          }
          yield* res.send("still serving");
        });
        const sock = yield* rawRequest(server.port, "GET /gone HTTP/1.1\r\nhost: test\r\n\r\n");
        yield* sent.wait();
        yield* close(sock);
        yield* sleep(0.05); // the failed handler's outcome reaches the server meanwhile
        const res = yield* fetch(`${server.url}/next`);
        const text = yield* res.text();
        yield* B.cancel(server.task);
        return [res.status, text, server.task.status];
      });
      expect(outcome).toEqual([200, "still serving", "cancelled"]);
    });

    it("bodies: invalid JSON is a 400, a body over bodyLimit a 413", async () => {
      const got = await leakFree(backend, function* () {
        const server = yield* start({ bodyLimit: 1000 }, function* (req, res) {
          yield* res.send(yield* req.json());
        });
        const answers = [];
        for (const body of ["{not json", "x".repeat(5000), "[1,2]"]) {
          const res = yield* fetch(server.url, { method: "POST", body });
          answers.push([res.status, (yield* res.text()).slice(0, 38)]);
        }
        yield* B.cancel(server.task);
        return answers;
      });
      expect(got).toEqual([
        [400, "the request's body is not JSON: Expect"],
        [413, "the request's body is larger than 1000"],
        [200, "[1,2]"],
      ]);
    });

    it("fetch: a timeout aborts the request (Timeout), a cancelled fetch aborts it (the handler sees its client leave)", async () => {
      const got = await leakFree(backend, function* () {
        // Each request's handler says when it runs and when it was cancelled, so that the client
        // gives up only once its request is in: a loaded machine may take longer than a short
        // timeout to bring a request to its handler, which would then never run.
        const entered = [new L.Trigger(), new L.Trigger()];
        const left = [new L.Trigger(), new L.Trigger()];
        let requests = 0;
        const server = yield* start({}, function* () {
          const i = requests++;
          entered[i]!.signal();
          try {
            yield* sleep(3600);
          } finally {
            left[i]!.signal();
          }
        });
        const timing = B.spawn(function* () {
          try {
            yield* fetch(`${server.url}/slow`, { timeout: 1 });
            return null;
          } catch (error) {
            return error;
          }
        });
        yield* entered[0]!.wait();
        const timedOut = yield* B.awaitExn(timing);
        yield* left[0]!.wait(); // the aborted request's handler was cancelled
        const client = B.spawn(function* () {
          yield* fetch(`${server.url}/slow`);
        });
        yield* entered[1]!.wait();
        yield* B.cancel(client);
        yield* left[1]!.wait(); // and the cancelled one's
        yield* B.cancel(server.task);
        return [timedOut instanceof Timeout, client.status];
      });
      expect(got).toEqual([true, "cancelled"]);
    });

    it("a handler whose cleanup sends to a client that left is the client leaving, not a failure of the server", async () => {
      const got = await leakFree(backend, function* () {
        const entered = new L.Trigger();
        const left = new L.Trigger();
        const sent: Sent = { error: null };
        const server = yield* start({}, function* (req, res) {
          if (req.url !== "/slow") return yield* res.send("fine");
          entered.signal();
          try {
            yield* sleep(3600);
          } finally {
            // Cancelled because the client left: this send finds it gone (ECONNRESET).
            try {
              yield* sendTooLate(res, sent);
            } finally {
              left.signal();
            }
          }
        });
        const client = B.spawn(function* () {
          yield* fetch(`${server.url}/slow`);
        });
        yield* entered.wait();
        yield* B.cancel(client);
        yield* left.wait();
        const after = yield* fetch(`${server.url}/fine`);
        const text = yield* after.text();
        yield* B.cancel(server.task);
        return [(sent.error as NodeJS.ErrnoException | null)?.code, text, server.task.status];
      });
      expect(got).toEqual(["ECONNRESET", "fine", "cancelled"]);
    });

    it("a handler in its cleanup after its client left, cancelled with serve, is the client leaving too: serve ends cancelled", async () => {
      // The serve's grace ends while the handler, cancelled because its client left, is in its
      // cleanup: the server cancels its exchange, and the cleanup's send then finds the client gone.
      const got = await leakFree(backend, function* () {
        const entered = new L.Trigger();
        const cleaning = new L.Trigger();
        const shutDown = new L.Trigger();
        const sent: Sent = { error: null };
        const hear = (message: unknown): void => {
          if ((message as { task: B.Task<unknown> }).task.name === "exchange") shutDown.signal();
        };
        subscribe(B.channels.task.cancel, hear);
        try {
          const server = yield* start({ grace: 0.001 }, function* (_req, res) {
            entered.signal();
            try {
              yield* sleep(3600);
            } finally {
              cleaning.signal();
              yield* shutDown.wait();
              yield* sendTooLate(res, sent);
            }
          });
          const client = B.spawn(function* () {
            yield* fetch(`${server.url}/slow`);
          });
          yield* entered.wait();
          yield* B.cancel(client);
          yield* cleaning.wait();
          let stopped: unknown = "stopped";
          try {
            yield* B.cancel(server.task);
          } catch (error) {
            stopped = error;
          }
          return [(sent.error as NodeJS.ErrnoException | null)?.code, stopped, server.task.status];
        } finally {
          unsubscribe(B.channels.task.cancel, hear);
        }
      });
      expect(got).toEqual(["ECONNRESET", "stopped", "cancelled"]);
    });

    it("fetch: a response's body is read once; one disposed unread leaves nothing open", async () => {
      const got = await leakFree(backend, function* () {
        const server = yield* start({}, function* (req, res) {
          yield* res.send(req.url === "/big" ? Buffer.alloc(1024 * 1024) : "small");
        });
        const small = yield* fetch(`${server.url}/small`);
        const text = yield* small.text();
        let twice: unknown;
        try {
          yield* small.text();
        } catch (error) {
          twice = error;
        }
        {
          using big = yield* fetch(`${server.url}/big`);
          expect(big.status).toBe(200);
        } // disposed unread
        yield* B.cancel(server.task);
        return [text, String(twice)];
      });
      expect(got).toEqual(["small", expect.stringMatching(/^TypeError: the response's body was read already/)]);
    });

    it("checks its options at once", () => {
      const handler = function* () {};
      expect(() => serve({ port: 70000 }, handler)).toThrow(RangeError);
      expect(() => serve({ port: 0, limit: 0 }, handler)).toThrow(/limit must be an integer ≥ 1/);
      expect(() => serve({ port: 0, deadline: -1 }, handler)).toThrow(/deadline must be a number of seconds > 0/);
      expect(() => serve({ port: 0 }, 42 as never)).toThrow(/expects a generator function/);
      expect(() => fetch("not a url")).toThrow(/is not an absolute URL/);
      expect(() => fetch("http://x/", { timeout: -1 })).toThrow(RangeError);
      expect(() => new HttpError(200)).toThrow(RangeError);
    });

    it("a port in use fails serve with EADDRINUSE", async () => {
      const error = await leakFree(backend, function* () {
        const first = yield* start({}, echoPath);
        const r = yield* B.awaitTask(
          B.spawn(function* () {
            yield* serve({ port: first.port }, echoPath);
          }),
        );
        yield* B.cancel(first.task);
        return r.ok ? null : (r.error as NodeJS.ErrnoException).code;
      });
      expect(error).toBe("EADDRINUSE");
    });

    it("a connection closed under a reading handler makes its read fail or its task cancelled, never the process", async () => {
      await leakFree(backend, function* () {
        const entered = new L.Trigger();
        const done = new L.Trigger();
        const server = yield* start({}, function* (req) {
          entered.signal();
          try {
            yield* req.bytes();
          } catch (error) {
            expect(error).not.toBeInstanceOf(SocketClosed);
          } finally {
            done.signal();
          }
        });
        const sock = yield* rawRequest(server.port, "POST /upload HTTP/1.1\r\nhost: test\r\ncontent-length: 100000\r\n\r\npartial");
        yield* entered.wait();
        yield* close(sock);
        yield* done.wait();
        yield* B.cancel(server.task);
      });
    });
  });
}
