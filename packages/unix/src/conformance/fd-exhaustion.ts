/** Accepting when the process is out of file descriptors, in a child process with a low `ulimit -n`. */
import * as net from "node:net";
import { describe, expect, it } from "vitest";
import { Child } from "./child.js";
import type { Suite } from "./context.js";
import { LO4 } from "./support.js";

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends "ping" on a new connection and returns what came back before the connection ended ("" if it failed). */
function ping(port: number): Promise<string> {
  return new Promise<string>((resolve) => {
    const c = net.connect({ host: LO4, port }, () => c.write("ping"));
    let got = "";
    c.on("data", (d) => {
      got += d.toString();
      if (got.length >= 4) c.destroy();
    });
    c.on("error", () => resolve(""));
    c.on("close", () => resolve(got));
    setTimeout(() => c.destroy(), 1000);
  });
}

/** @internal */
export function fdExhaustionTests(suite: Suite): void {
  const backend = suite.options.childProcess;
  describe.skipIf(backend === undefined || !suite.systemSockets)("file descriptor exhaustion", () => {
    it("accept under fd exhaustion (ulimit -n in a child process) keeps the server alive", async () => {
      const limit = 48;
      const child = new Child(backend!, limit);
      try {
        const port = Number((await child.next("PORT", 20_000)).split(" ")[1]);
        // more connections than the child has descriptors left
        const conns: net.Socket[] = [];
        let closedByServer = 0;
        for (let i = 0; i < limit; i++) {
          const c = net.connect({ host: LO4, port });
          c.on("error", () => {});
          c.resume(); // so that the server's FIN is seen
          c.on("close", () => {
            if (!c.destroyed || c.readableEnded || c.errored) closedByServer++;
          });
          conns.push(c);
        }
        // The backend either reports EMFILE to accept (the server retries) or,
        // as libuv does, accepts and closes what it cannot keep: either way
        // the excess clients are not served, and the server stays up.
        const deadline = performance.now() + 5000;
        while (closedByServer === 0 && !child.seen.includes("EMFILE") && performance.now() < deadline) await delay(20);
        expect(
          closedByServer > 0 || child.seen.includes("EMFILE"),
          "out of descriptors, the server turned connections away or saw EMFILE",
        ).toBe(true);
        for (const c of conns) c.destroy();
        // the server recovers once descriptors are free again: a new client is served
        let echoed = "";
        for (let attempt = 0; attempt < 50 && echoed !== "ping"; attempt++) {
          await delay(50);
          echoed = await ping(port);
        }
        expect(echoed, "the server still echoes once descriptors are free again").toBe("ping");
        child.kill("SIGTERM");
        const done = (await child.next("DONE")).split(" ").map(Number);
        expect(done[1], "the server accepted clients").toBeGreaterThan(0); // clients accepted
        expect(await child.exited, "the child process (the server on this backend, ulimit -n) ended cleanly").toBe(0);
      } finally {
        child.kill("SIGKILL");
      }
    });
  });
}
