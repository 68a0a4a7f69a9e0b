// readSlot and releaseSlot (src/epoll/slots.ts): reads into arena slots of the native backend.

import * as B from "@bobbin/core";
import { failure } from "@bobbin/test-support";
import { close, read, readChunk, run, type Socket, SocketClosed, shutdown, Timeout, udpv4, withTimeout, write } from "@bobbin/unix";
import { connectedPair } from "@bobbin/unix/conformance";
import { describe, expect, it } from "vitest";
import { ArenaOverflow, ArenaPool, type NativeBackend, nativeBackend, readSlot, releaseSlot, type Slot } from "../../src/index.js";

describe("readSlot", () => {
  it("reads into arena slots, holding none while it waits", async () => {
    let backend!: NativeBackend;
    const echoed = await run(
      function* () {
        const [client, conn, server] = yield* connectedPair();
        const echo = B.spawn(function* () {
          let total = 0;
          for (let slot: Slot | null; (slot = yield* readSlot(conn)) !== null; ) {
            expect(slot.buffer.length).toBe(16384);
            total += slot.length;
            try {
              yield* write(conn, slot.buffer, 0, slot.length);
            } finally {
              releaseSlot(slot);
            }
          }
          return total;
        });
        yield* B.yieldNow();
        yield* B.yieldNow();
        expect(backend.pool.stats().inUse).toBe(0); // parked, no buffer held
        const got = Buffer.alloc(5);
        for (const word of ["hello", "world"]) {
          yield* write(client, word);
          let n = 0;
          while (n < 5) n += yield* read(client, got, n);
          expect(got.toString()).toBe(word);
        }
        shutdown(client, "send");
        const total = yield* B.awaitExn(echo);
        expect(backend.pool.stats().inUse).toBe(0);
        for (const s of [client, conn, server]) yield* close(s);
        return total;
      },
      { backend: () => (backend = nativeBackend()) },
    );
    expect(echoed).toBe(10);
  });

  it("waits for a slot at the pool's cap (back-pressure)", async () => {
    const pool = new ArenaPool({ slotSize: 64, maxBytes: 1 }); // one arena: 64 slots
    const log = await run(
      function* () {
        const log: string[] = [];
        const [client, conn, server] = yield* connectedPair();
        const held: Slot[] = [];
        for (let i = 0; i < 64; i++) held.push(yield* pool.acquire());
        const reader = B.spawn(function* () {
          const slot = (yield* readSlot(conn))!;
          log.push(`read ${slot.length} into slot ${slot.id}`);
          releaseSlot(slot);
        });
        yield* write(client, "data");
        yield* withTimeout(0.05, function* () {
          try {
            yield* read(client, Buffer.alloc(1)); // nothing comes: just let time pass
          } catch (e) {
            if (!(e instanceof Timeout)) throw e;
          }
        });
        log.push(`waiting ${pool.stats().waiting}`);
        pool.release(held[7]!);
        yield* B.awaitExn(reader);
        for (const s of held) if (s !== held[7]) pool.release(s);
        for (const s of [client, conn, server]) yield* close(s);
        return log;
      },
      { backend: () => nativeBackend({ pool }) },
    );
    expect(log).toEqual(["waiting 1", "read 4 into slot 7"]);
    expect(pool.stats().inUse).toBe(0);
    pool.close();
  });

  it("an overrun of a slot is reported when it is released", async () => {
    await run(
      function* () {
        const [client, conn, server] = yield* connectedPair();
        yield* write(client, "abc");
        const slot = (yield* readSlot(conn))!;
        const b = slot.buffer;
        new Uint8Array(b.buffer, b.byteOffset, b.length + 3).fill(1, b.length);
        expect(() => releaseSlot(slot)).toThrow(ArenaOverflow);
        for (const s of [client, conn, server]) yield* close(s);
      },
      { backend: nativeBackend },
    );
  });

  it("returns null at the end of the stream, and rejects other sockets", async () => {
    await run(
      function* () {
        const [client, conn, server] = yield* connectedPair();
        yield* close(client);
        expect(yield* readSlot(conn)).toBeNull();
        expect(() => readSlot(server)).toThrow(TypeError);
        expect(() => readSlot(udpv4())).toThrow(TypeError);
        expect(() => readSlot({} as Socket)).toThrow(TypeError);
        yield* close(conn);
        expect(() => readSlot(conn)).toThrow(SocketClosed);
        yield* close(server);
      },
      { backend: nativeBackend },
    );
  });
});

describe("readChunk on the native backend", () => {
  it("lends arena slots: none while it waits or after a cancelled wait, one while lent, back at release, the next readChunk and the close", async () => {
    let backend!: NativeBackend;
    const seen = await run(
      function* () {
        const inUse = () => backend.pool.stats().inUse;
        const seen: number[] = [];
        const [client, conn, server] = yield* connectedPair();
        yield* close(server);
        yield* failure(() => withTimeout(0.02, readChunk(conn)));
        seen.push(inUse()); // a cancelled wait holds nothing
        yield* write(client, "one");
        const one = (yield* readChunk(conn))!;
        seen.push(inUse()); // lent
        one.release();
        seen.push(inUse()); // released
        yield* write(client, "two");
        yield* readChunk(conn);
        yield* write(client, "three");
        const three = (yield* readChunk(conn))!;
        seen.push(inUse()); // the next readChunk took "two" back
        expect(Buffer.from(three.bytes).toString()).toBe("three");
        yield* close(conn);
        seen.push(inUse()); // the close took "three" back
        yield* close(client);
        return seen;
      },
      { backend: () => (backend = nativeBackend()) },
    );
    expect(seen).toEqual([0, 1, 0, 1, 0]);
  });
});
