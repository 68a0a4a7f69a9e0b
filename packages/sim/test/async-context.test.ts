import { AsyncLocalStorage } from "node:async_hooks";
import * as B from "@bobbin/core";
import { accept, bindAndListen, close, connect, read, sleep, tcpv4, write } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { Sim } from "../src/index.js";

const als = new AsyncLocalStorage<string>();

describe("AsyncLocalStorage in a simulated world", () => {
  it.each(["fifo", "random", "pct"] as const)(
    "each task finds its own store after the simulator's wakes (virtual time, the network), %s schedule",
    async (schedule) => {
      const sim = new Sim({ seed: 5, policy: schedule });
      sim.host("server", function* () {
        const s = tcpv4();
        yield* bindAndListen(s, { host: "0.0.0.0", port: 7 });
        const handlers = B.orphans<void>();
        for (let i = 0; i < 2; i++) {
          const [c] = yield* accept(s);
          B.spawn({ orphans: handlers }, function* () {
            als.enterWith(`handler ${i}`);
            const buf = Buffer.alloc(16);
            const n = yield* read(c, buf);
            yield* sleep(0.01);
            yield* write(c, `${buf.toString("latin1", 0, n)} ${als.getStore()}`);
            yield* close(c);
          });
        }
        yield* B.drain(handlers);
      });
      for (const name of ["a", "b"]) {
        sim.client(name, function* () {
          als.enterWith(`client ${name}`);
          yield* sleep(0.001);
          const c = tcpv4();
          yield* connect(c, { host: "server", port: 7 });
          const afterConnect = als.getStore();
          yield* write(c, name);
          const buf = Buffer.alloc(64);
          const n = yield* read(c, buf);
          yield* close(c);
          return [afterConnect, buf.toString("latin1", 0, n), als.getStore()];
        });
      }
      const [a, b] = (await sim.run()) as [string, string, string][];
      expect(a[0]).toBe("client a");
      expect(a[2]).toBe("client a");
      expect(b[0]).toBe("client b");
      expect(b[2]).toBe("client b");
      expect([a[1], b[1]]).toEqual([expect.stringMatching(/^a handler [01]$/), expect.stringMatching(/^b handler [01]$/)]);
      expect(a[1].slice(-1)).not.toBe(b[1].slice(-1));
    },
  );
});
