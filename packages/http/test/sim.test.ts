// serve and fetch in @bobbin/sim: a simulated network and virtual time; fetch goes over the
// simulated network (Node's http.request over a toStream stream).
import * as B from "@bobbin/core";
import { Sim, simulated } from "@bobbin/sim";
import { sleep } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { fetch, serve } from "../src/index.js";
import { serveSuite } from "./support/suite.js";

serveSuite({ name: "sim", backend: simulated({ seed: 1 }), systemSockets: false });

describe("serve on a simulated host that crashes", () => {
  it("ends when its host crashes with a request in flight (within its grace: a crash cancels it), and serves again once restarted", async () => {
    const sim = new Sim({ seed: 5 });
    const incarnations: string[] = [];
    sim.host("api", function* () {
      incarnations.push(`up at ${sim.now()}`);
      try {
        yield* serve({ host: "0.0.0.0", port: 80, grace: 0.5 }, function* (req, res) {
          if (req.url === "/slow") yield* sleep(60);
          yield* res.send("ok");
        });
      } finally {
        incarnations.push(`down at ${sim.now()}`);
      }
    });
    sim.client("client", function* () {
      const slow = B.spawn(function* () {
        try {
          return (yield* fetch("http://api/slow", { timeout: 5 })).status;
        } catch (error) {
          return (error as NodeJS.ErrnoException).code;
        }
      });
      yield* sleep(0.5);
      sim.crash("api");
      sim.restart("api"); // once the crashed incarnation has ended
      const lost = yield* B.awaitExn(slow);
      yield* sleep(1);
      const again = yield* fetch("http://api/", { timeout: 5 });
      return [lost, again.status, yield* again.text()];
    });
    expect(await sim.run()).toEqual([["ECONNRESET", 200, "ok"]]);
    expect(incarnations.slice(0, 3)).toEqual(["up at 0", "down at 1", "up at 1"]); // down once its grace passed
    expect(incarnations).toHaveLength(4); // and down again when the world ends
  });
});
