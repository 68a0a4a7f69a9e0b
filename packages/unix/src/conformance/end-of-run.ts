/** The end of a run: whatever the program left open is closed, and no handle outlives `run`. */

import { join } from "node:path";
import * as B from "@bobbin/core";
import { accept, bindAndListen, connect, sendto, sleep, tcpv4, udpv4, unixSocket } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";
import { activeHandles, LO4, leaked, loopbackListener } from "./support.js";

/** @internal */
export function endOfRunTests(suite: Suite): void {
  describe("the end of a run", () => {
    it("after run the process has no active handles left, even for sockets left open", async () => {
      await suite.leakFree(function* () {
        const [server, port] = yield* loopbackListener();
        const sock = tcpv4();
        yield* connect(sock, { host: LO4, port });
        const [client] = yield* accept(server);
        const udp = udpv4();
        yield* sendto(udp, Buffer.from("x"), { host: LO4, port: 9 });
        const path = join(suite.dir(), "left-open.sock");
        const unix = unixSocket();
        yield* bindAndListen(unix, { path });
        void client;
        // none of them closed: run closes them and waits for their handles
      });
    });

    it("a run whose main fails still closes everything", async () => {
      const before = activeHandles();
      await expect(
        suite.inRun(function* () {
          const server = tcpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 });
          B.spawn(function* () {
            yield* accept(server);
          });
          yield* sleep(0.01);
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(leaked(before, activeHandles()), "after the run, no handle of the backend is left in the process").toEqual({});
    });
  });
}
