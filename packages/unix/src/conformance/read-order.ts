/**
 * Several tasks reading one stream: each read returns the next bytes of the
 * stream at the moment it returns, whichever task asked first and whatever
 * the backend read ahead for a parked reader.
 */
import * as B from "@bobbin/core";
import { close, read, sleep, write } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";
import { connectedPair, pattern } from "./support.js";

/** @internal */
export function readOrderTests(suite: Suite): void {
  describe("reads of one stream by several tasks", () => {
    it("the bytes come back in the order the reads return: a parked reader's bytes before a later read's", async () => {
      await suite.leakFree(function* () {
        const [sock, peer, server] = yield* connectedPair();
        yield* close(server);
        // In each round a reader parks, 32 bytes arrive, and a second task
        // reads after 3 × `round` turns of the scheduler, so that over the
        // rounds it asks at every point of the first reader's wake-up (a
        // scheduler polls its backend every few dozen steps).
        for (let round = 0; round < 48; round++) {
          const data = pattern(round + 1, 32);
          const returned: Buffer[] = [];
          const reader = () =>
            function* () {
              const buf = Buffer.alloc(16);
              const n = yield* read(sock, buf);
              returned.push(buf.subarray(0, n));
            };
          const first = B.spawn(reader());
          yield* sleep(0.002); // it parks: nothing has arrived
          yield* write(peer, data);
          const second = B.spawn(function* () {
            for (let i = 0; i < 3 * round; i++) yield* B.yieldNow();
            yield* reader()();
          });
          yield* B.awaitExn(first);
          yield* B.awaitExn(second);
          let got = Buffer.concat(returned);
          const rest = Buffer.alloc(32);
          while (got.length < data.length) {
            const n = yield* read(sock, rest, 0, data.length - got.length);
            got = Buffer.concat([got, rest.subarray(0, n)]);
          }
          expect(got.toString("hex"), `round ${round}: the reads' bytes, in the order they returned`).toBe(data.toString("hex"));
        }
        yield* close(sock);
        yield* close(peer);
      });
    });
  });
}
