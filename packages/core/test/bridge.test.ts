/** bridge: plain async code runs task bodies in a running program, as children of the bridge's opener, until it closes. */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";
import { errorOf, settle, sleepMs } from "./support/helpers.js";

/** What a settled Promise gave, for assertions. */
function outcome<T>(p: Promise<T>): Promise<B.Result<T>> {
  return p.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
}

describe("bridge", () => {
  it("runs a call from a Node http callback as a child of the task that opened the bridge", async () => {
    const seen = await B.run(function* opener() {
      const me = B.self();
      const server = http.createServer();
      return yield* B.bridge(function* serving(call) {
        server.on("request", (req, res) => {
          call(function* handle(url: string) {
            yield* B.yieldNow();
            return `${B.self().name} ${B.self().parent === me} ${url}`;
          }, req.url ?? "").then(
            (text) => res.end(text),
            (error: unknown) => res.writeHead(500).end(String(error)),
          );
        });
        server.listen(0, "127.0.0.1");
        yield* B.once(server, "listening");
        const { port } = server.address() as AddressInfo;
        try {
          const reply = yield* B.promise((signal) => fetch(`http://127.0.0.1:${port}/hello`, { signal }));
          return yield* B.promise(() => reply.text());
        } finally {
          server.close();
          server.closeAllConnections();
          yield* B.once(server, "close");
        }
      });
    });
    expect(seen).toBe("handle true /hello");
  });

  it("runs a call from a timer, and a second one after it", async () => {
    const results: number[] = [];
    await B.run(function* () {
      yield* B.bridge(function* (call) {
        const done = new L.Trigger();
        setTimeout(() => {
          call(function* (n: number) {
            yield* sleepMs(1);
            return n * 2;
          }, 21)
            .then((v) => {
              results.push(v);
              return call(function* () {
                return 7;
              });
            })
            .then((v) => {
              results.push(v);
              done.signal();
            });
        }, 5);
        yield* done.wait();
      });
    });
    expect(results).toEqual([42, 7]);
  });

  it("runs a call made from another run on the same thread", async () => {
    const calls: string[] = [];
    const result = await B.run(function* () {
      return yield* B.bridge(function* (call) {
        // Another run, started from this one's task, calls through the bridge while both run.
        const inner = B.run(function* () {
          return yield* B.promise(() =>
            call(function* () {
              calls.push("ran in the bridge's run");
              return 5;
            }),
          );
        });
        return yield* B.promise(() => inner);
      });
    });
    expect(result).toBe(5);
    expect(calls).toEqual(["ran in the bridge's run"]);
  });

  it("rejects a call with its task's error, and goes on", async () => {
    const boom = new Error("boom");
    const value = await B.run(function* () {
      return yield* B.bridge(function* (call) {
        const first = yield* B.promise(() =>
          outcome(
            call(function* () {
              yield* B.yieldNow();
              throw boom;
            }),
          ),
        );
        const second = yield* B.promise(() =>
          call(function* () {
            return "still open";
          }),
        );
        return [first, second];
      });
    });
    expect(value).toEqual([{ ok: false, error: boom }, "still open"]);
  });

  it("rejects a call that is not given a generator function, with a TypeError that says so", async () => {
    const [notFn, asyncFn] = await B.run(function* () {
      return yield* B.bridge(function* (call) {
        const a = yield* B.promise(() => outcome(call(42 as never)));
        const b = yield* B.promise(() => outcome(call((async () => 1) as never)));
        return [a, b];
      });
    });
    expect(String(errorOf(notFn!))).toMatch(/expects a generator function .*got number 42/);
    expect(String(errorOf(asyncFn!))).toMatch(/expects a generator function .*got async function/);
  });

  it("closes when its body returns: running calls are cancelled (their finally runs), later calls reject with BridgeClosed", async () => {
    const log: string[] = [];
    let call: B.Bridge | undefined;
    let running: Promise<B.Result<unknown>> | undefined;
    const value = await B.run(function* () {
      return yield* B.bridge(function* (c) {
        call = c;
        const started = new L.Trigger();
        running = outcome(
          c(function* () {
            try {
              started.signal();
              yield* new L.Trigger().wait();
            } finally {
              log.push("call's finally");
            }
          }),
        );
        yield* started.wait();
        return "body's value";
      });
    });
    expect(value).toBe("body's value");
    expect(log).toEqual(["call's finally"]);
    expect(errorOf(await running!)).toBeInstanceOf(B.Cancelled);
    const late = errorOf(await outcome(call!(function* () {})));
    expect(late).toBeInstanceOf(B.BridgeClosed);
    expect((late as Error).message).toMatch(/the bridge is closed/);
  });

  it("refuses, with BridgeClosed, the calls that had not started when it closed", async () => {
    let queued: Promise<B.Result<unknown>> | undefined;
    let ran = false;
    await B.run(function* () {
      yield* B.bridge(function* (call) {
        // Made while the body runs: the pump has no chance to start it before the body returns.
        queued = outcome(
          call(function* () {
            ran = true;
          }),
        );
      });
    });
    const error = errorOf(await queued!);
    expect(error).toBeInstanceOf(B.BridgeClosed);
    expect((error as Error).message).toMatch(/closed before this call started/);
    expect(ran).toBe(false);
  });

  it("closes when the task that opened it is cancelled, cancelling the calls it runs", async () => {
    const log: string[] = [];
    let call: B.Bridge | undefined;
    let running: Promise<B.Result<unknown>> | undefined;
    await B.run(function* () {
      const opened = new L.Trigger();
      const opener = B.spawn(function* () {
        yield* B.bridge(function* (c) {
          call = c;
          running = outcome(
            c(function* () {
              try {
                opened.signal();
                yield* new L.Trigger().wait();
              } finally {
                log.push("call cleaned");
              }
            }),
          );
          yield* new L.Trigger().wait();
        });
      });
      yield* opened.wait();
      yield* B.cancel(opener);
      log.push("opener cancelled");
    });
    expect(log).toEqual(["call cleaned", "opener cancelled"]);
    expect(errorOf(await running!)).toBeInstanceOf(B.Cancelled);
    expect(errorOf(await outcome(call!(function* () {})))).toBeInstanceOf(B.BridgeClosed);
  });

  it("throws its body's error once the calls it ran have ended", async () => {
    const boom = new Error("body failed");
    const log: string[] = [];
    const r = await settle(function* () {
      yield* B.bridge(function* (call) {
        const started = new L.Trigger();
        void outcome(
          call(function* () {
            try {
              started.signal();
              yield* new L.Trigger().wait();
            } finally {
              yield* B.yieldNow();
              log.push("call cleaned");
            }
          }),
        );
        yield* started.wait();
        throw boom;
      });
    });
    expect(errorOf(r)).toBe(boom);
    expect(log).toEqual(["call cleaned"]);
  });

  it("rejects a cancelled call with the error its cleanup threw, not a bare Cancelled", async () => {
    const flush = new Error("flush failed");
    let running: Promise<B.Result<unknown>> | undefined;
    await settle(function* () {
      yield* B.bridge(function* (call) {
        const started = new L.Trigger();
        running = outcome(
          call(function* () {
            try {
              started.signal();
              yield* new L.Trigger().wait();
            } finally {
              // biome-ignore lint/correctness/noUnsafeFinally: the cleanup error under test
              throw flush;
            }
          }),
        );
        yield* started.wait();
      });
    });
    expect(errorOf(await running!)).toBe(flush);
  });

  it("checks its body", () => {
    expect(() => B.bridge(42 as never)).toThrow(/bridge\(body\) expects a generator function .*got number 42/);
  });
});
