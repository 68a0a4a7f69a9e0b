// What the native and io_uring backends share (src/raw/), checked on both.

import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as B from "@bobbin/core";
import { type Backend, close, read, readExactly, run, write } from "@bobbin/unix";
import { connectedPair } from "@bobbin/unix/conformance";
import { describe, expect, it } from "vitest";
import { type NativeBackend, nativeBackend, type UringBackend, uringBackend } from "../../src/index.js";
import { noUring } from "../helpers.js";

/** `selectPolled`: how many times `select` looked for I/O itself (a non-blocking drain of the set, an entry into the ring). */
const backends = [
  {
    name: "native",
    backend: nativeBackend,
    exported: "nativeBackend",
    skip: "",
    selectPolled: (b: Backend) => (b as NativeBackend).stats.pollEvents,
  },
  {
    name: "uring",
    backend: uringBackend,
    exported: "uringBackend",
    skip: noUring,
    selectPolled: (b: Backend) => (b as UringBackend).stats.submits,
  },
];

describe.each(backends)("$name backend", ({ name, backend, exported, skip, selectPolled }) => {
  it.skipIf(skip !== "")(`concurrent writes to one socket never interleave, even past the socket buffers${skip}`, async () => {
    const size = 4 << 20; // far more than the kernel buffers: both writes park
    const [a, b, c] = [Buffer.alloc(size, 0x61), Buffer.alloc(size, 0x62), Buffer.from("c")];
    const got = await run(
      function* () {
        const [client, conn, server] = yield* connectedPair();
        const writers = [a, b, c].map((buf) =>
          B.spawn(function* () {
            yield* write(client, buf);
          }),
        );
        const received = Buffer.alloc(2 * size + 1);
        yield* readExactly(conn, received);
        yield* B.awaitAll(writers);
        for (const s of [client, conn, server]) yield* close(s);
        return received;
      },
      { backend },
    );
    expect(got.subarray(0, size).every((x) => x === 0x61)).toBe(true);
    expect(got.subarray(size, 2 * size).every((x) => x === 0x62)).toBe(true);
    expect(got[2 * size]).toBe(0x63);
  });

  it.skipIf(skip !== "")(
    `tryWrite takes a write whole at once, or nothing while a write is in progress or the socket is closed${skip}`,
    async () => {
      const size = 4 << 20; // far more than the kernel buffers: the write parks
      const got = await run(
        function* () {
          const [client, conn, server] = yield* connectedPair();
          const tryWrite = (bytes: string) => client.backend.tryWrite!(client, Buffer.from(bytes), 0, bytes.length);
          const taken = [tryWrite("one ")];
          const first = Buffer.alloc(4);
          yield* readExactly(conn, first);
          const writer = B.spawn(function* () {
            yield* write(client, Buffer.alloc(size, 0x61));
          });
          yield* B.yieldNow(); // the big write has begun, and waits for the peer
          taken.push(tryWrite("two"));
          const big = Buffer.alloc(size);
          yield* readExactly(conn, big);
          yield* B.awaitExn(writer);
          // From a Node callback, while the task waits to read: the bytes go out without a task's help.
          setTimeout(() => taken.push(tryWrite("three")), 10);
          const last = Buffer.alloc(5);
          yield* readExactly(conn, last);
          for (const s of [client, conn, server]) yield* close(s);
          taken.push(tryWrite("four"));
          return { taken, text: `${first}${last}`, big: big.every((x) => x === 0x61) };
        },
        { backend },
      );
      expect(got).toEqual({ taken: [true, false, true, false], text: "one three", big: true });
    },
  );

  it.skipIf(skip !== "")(`a run whose tasks wait on nothing I/O can wake ends in Deadlock, even with sockets open${skip}`, () => {
    const child = fileURLToPath(new URL("../fixtures/deadlock-child.mjs", import.meta.url));
    const out = execFileSync(process.execPath, [child, exported], { encoding: "utf8", timeout: 20_000 });
    expect(out.trim(), name).toBe("DEADLOCK");
  });

  it.skipIf(skip !== "")(`a busy scheduler still sees I/O: select looks for it without waiting${skip}`, async () => {
    let made!: Backend;
    const order = await run(
      function* () {
        const log: string[] = [];
        const [client, conn, server] = yield* connectedPair();
        let busy = true;
        const reader = B.spawn(function* () {
          const n = yield* read(conn, Buffer.alloc(8));
          log.push(`read ${n}`);
          busy = false;
        });
        yield* B.yieldNow(); // the reader parks
        const spinner = B.spawn(function* () {
          const end = performance.now() + 500;
          while (performance.now() < end && busy) yield* B.yieldNow();
          log.push("spinner done");
        });
        yield* write(client, "ping");
        yield* B.awaitExn(reader);
        yield* B.awaitExn(spinner);
        for (const s of [client, conn, server]) yield* close(s);
        return log;
      },
      // A long slice: only the scheduler's own polls can see the data in time.
      { backend: (domain) => (made = backend(domain)), sliceMs: 2000 },
    );
    expect(order).toEqual(["read 4", "spinner done"]);
    expect(selectPolled(made)).toBeGreaterThan(0);
  });
});
