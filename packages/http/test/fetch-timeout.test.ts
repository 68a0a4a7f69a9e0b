// fetch's own timeout is what its Timeout says: the seconds the program gave, and that it was
// fetch's (not what was left of it when the last wait began, nor withTimeout, which the program did not call).
import * as B from "@bobbin/core";
import { Sim } from "@bobbin/sim";
import { run, sleep, Timeout, withTimeout } from "@bobbin/unix";
import { afterEach, describe, expect, it, vi } from "vitest";
import { fetch, serve } from "../src/index.js";

function* slowServer(host: string, port: number, onPort: (port: number) => void): Generator<B.Instruction, void, unknown> {
  yield* serve({ host, port, onListening: (address) => onPort(address.port) }, function* (req, res) {
    if (req.url === "/slow-body") {
      res.writeHead(200);
      res.write("a first piece");
    }
    yield* sleep(10);
    yield* res.send("late");
  });
}

function* timedOut(op: B.Operation<unknown>): Generator<B.Instruction, Timeout, unknown> {
  try {
    yield* op;
  } catch (error) {
    if (error instanceof Timeout) return error;
    throw error;
  }
  throw new Error("no timeout");
}

describe("fetch's timeout", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("leaves a Timeout its request threw with the very seconds left to it as it is (told apart by source, not seconds)", async () => {
    // A timeout of 0 leaves 0 s to the request's wait; the request throws a Timeout of 0 s of its own.
    const own = new Timeout(0);
    vi.stubGlobal("fetch", () => {
      throw own;
    });
    const thrown = await run(function* () {
      return yield* timedOut(fetch("http://127.0.0.1:1/", { timeout: 0 }));
    });
    expect(thrown).toBe(own);
    expect(thrown.source).toBe("withTimeout");
  });

  it("throws a Timeout naming fetch's timeout and its seconds, for the head and for the body (Node's fetch)", async () => {
    const [head, body] = await run(function* () {
      let port = 0;
      const server = B.spawn(slowServer, "127.0.0.1", 0, (p: number) => {
        port = p;
      });
      while (port === 0) yield* sleep(0.01);
      const head = yield* timedOut(fetch(`http://127.0.0.1:${port}/`, { timeout: 0.1 }));
      const body = yield* timedOut(
        (function* () {
          const res = yield* fetch(`http://127.0.0.1:${port}/slow-body`, { timeout: 0.2 });
          return yield* res.text();
        })(),
      );
      yield* B.cancel(server);
      return [head, body];
    });
    expect([head.seconds, head.message]).toEqual([0.1, "the operation did not finish within 0.1 s (fetch's timeout)"]);
    expect([body.seconds, body.message]).toEqual([0.2, "the operation did not finish within 0.2 s (fetch's timeout)"]);
  });

  it("says the same over a simulated network, and leaves a withTimeout around it its own", async () => {
    const sim = new Sim({ seed: 3 });
    sim.host("api", function* () {
      yield* slowServer("0.0.0.0", 80, () => {});
    });
    sim.client("client", function* () {
      yield* sleep(0.1);
      const own = yield* timedOut(fetch("http://api/", { timeout: 0.5 }));
      const outer = yield* timedOut(withTimeout(0.25, fetch("http://api/", { timeout: 5 })));
      return [own.message, outer.message];
    });
    expect(await sim.run()).toEqual([
      ["the operation did not finish within 0.5 s (fetch's timeout)", "the operation did not finish within 0.25 s (withTimeout)"],
    ]);
  });
});
