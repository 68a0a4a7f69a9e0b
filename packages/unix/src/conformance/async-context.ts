/**
 * `AsyncLocalStorage` follows tasks on the backend: a task that entered a
 * store finds it again after each wake the backend gives it (a socket ready,
 * a sleep's deadline), while tasks woken in the same batch find theirs.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import * as B from "@bobbin/core";
import { close, read, sleep, write } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";
import { connectedPair } from "./support.js";

const als = new AsyncLocalStorage<string>();

/** @internal */
export function asyncContextTests(suite: Suite): void {
  describe("AsyncLocalStorage", () => {
    it("a task's store is its own after every wake: reads that complete together, a write, sleeps that end together", async () => {
      const seen = await suite.leakFree(function* () {
        const pairs = [yield* connectedPair(), yield* connectedPair(), yield* connectedPair()];
        const readers = pairs.map(([sock], i) =>
          B.spawn(function* () {
            if (i !== 1) als.enterWith(`reader ${i}`);
            const buf = Buffer.alloc(4);
            const n = yield* read(sock, buf);
            const afterRead = als.getStore();
            yield* sleep(0.001);
            return [buf.toString("latin1", 0, n), afterRead, als.getStore()];
          }),
        );
        const sleepers = [0, 1].map((i) =>
          B.spawn(function* () {
            als.enterWith(`sleeper ${i}`);
            yield* sleep(0.005);
            return als.getStore();
          }),
        );
        const writer = B.spawn(function* () {
          als.enterWith("writer");
          yield* sleep(0.002);
          for (const [, peer] of pairs) yield* write(peer, "ping");
          return als.getStore();
        });
        const results = {
          readers: [] as unknown[],
          sleepers: [] as unknown[],
          writer: yield* B.awaitExn(writer),
          root: als.getStore(),
        };
        for (const r of readers) results.readers.push(yield* B.awaitExn(r));
        for (const s of sleepers) results.sleepers.push(yield* B.awaitExn(s));
        for (const pair of pairs) for (const s of pair) yield* close(s);
        return results;
      });
      expect(seen).toEqual({
        readers: [
          ["ping", "reader 0", "reader 0"],
          ["ping", undefined, undefined],
          ["ping", "reader 2", "reader 2"],
        ],
        sleepers: ["sleeper 0", "sleeper 1"],
        writer: "writer",
        root: undefined,
      });
    });
  });
}
