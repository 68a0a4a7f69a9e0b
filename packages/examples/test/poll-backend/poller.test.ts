// Miou's contract as the poll backend keeps it: readiness only through
// select's signals, cancelled suspension points forgotten in select,
// interrupt ending a blocked select (in dom0 and in a worker domain).
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { close, read, run, sleep, Timeout, withTimeout, write } from "@bobbin/unix";
import { connectedPair } from "@bobbin/unix/conformance";
import { describe, expect, it } from "vitest";
import { type PollBackend, pollBackend } from "../../src/poll-backend/backend.js";
import type { Poller } from "../../src/poll-backend/poller.js";
import { sleepThere } from "../../src/poll-backend/tasks.js";

/** Runs `main` on the poll backend, given its poller. */
function onPoll<T>(main: (poller: Poller) => Generator<B.Instruction, T, unknown>): Promise<T> {
  return run(
    function* () {
      return yield* main((B.Domain.events() as PollBackend).poller);
    },
    { backend: pollBackend },
  );
}

describe("the poll backend keeps Miou's events contract", () => {
  it("a read resumes through a signal returned by select", async () => {
    await onPoll(function* (poller) {
      const [sock, peer, server] = yield* connectedPair();
      const reader = B.spawn(function* () {
        const buf = Buffer.alloc(8);
        return buf.toString("utf8", 0, yield* read(sock, buf));
      });
      yield* sleep(0.02);
      expect(reader.status).toBe("pending");
      expect(poller.size).toBe(1); // the reader's interest, in the table
      const before = { ...poller.stats };
      yield* write(peer, "ping");
      expect(yield* B.awaitExn(reader)).toBe("ping");
      expect(poller.size).toBe(0);
      expect(poller.stats.signals).toBeGreaterThan(before.signals);
      expect(poller.stats.selects).toBeGreaterThan(before.selects);
      for (const s of [sock, peer, server]) yield* close(s);
    });
  });

  it("a read cancelled by a timeout stays in the table until select hears of it, then is forgotten there", async () => {
    await onPoll(function* (poller) {
      const [sock, peer, server] = yield* connectedPair();
      const buf = Buffer.alloc(8);
      const forgotten = poller.stats.forgotten;
      let error: unknown = null;
      try {
        yield* withTimeout(0.02, read(sock, buf));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(Timeout);
      expect(poller.size).toBe(1); // the backend is told by select's `cancelled`, not by the throw
      yield* sleep(0); // parks until the next select, which is told
      expect(poller.size).toBe(0);
      expect(poller.stats.forgotten).toBe(forgotten + 1);
      // nothing was lost: the socket reads what comes next
      yield* write(peer, "late");
      expect(buf.toString("utf8", 0, yield* withTimeout(5, read(sock, buf)))).toBe("late");
      for (const s of [sock, peer, server]) yield* close(s);
    });
  });

  it("two readers of one socket: both are asked, one takes the byte, the other parks again and gets the next", async () => {
    const got = await onPoll(function* (poller) {
      const [sock, peer, server] = yield* connectedPair();
      const readOne = function* () {
        const buf = Buffer.alloc(1);
        yield* read(sock, buf);
        return buf.toString();
      };
      const readers = [B.spawn(readOne), B.spawn(readOne)];
      yield* sleep(0.02);
      expect(poller.size).toBe(2);
      yield* write(peer, "x");
      while (readers.every((r) => r.status === "pending")) yield* sleep(0.01);
      yield* sleep(0.02);
      expect(readers.filter((r) => r.status === "pending")).toHaveLength(1);
      expect(poller.size).toBe(1); // the loser waits again
      yield* write(peer, "y");
      const values = [];
      for (const r of readers) values.push(yield* B.awaitExn(r));
      for (const s of [sock, peer, server]) yield* close(s);
      return values.sort();
    });
    expect(got).toEqual(["x", "y"]);
  });

  it("interrupt ends a blocked select: a task woken from a Node callback runs at once", async () => {
    const elapsed = await onPoll(function* (poller) {
      // so that select blocks, with its timer 10 s away
      const sleeper = B.spawn(function* () {
        yield* sleep(10);
      });
      yield* B.yieldNow();
      const trigger = new L.Trigger();
      const interrupts = poller.stats.interrupts;
      const t0 = performance.now();
      setTimeout(() => trigger.signal(), 20);
      yield* trigger.wait();
      const ms = performance.now() - t0;
      expect(poller.stats.interrupts).toBe(interrupts + 1);
      yield* B.cancel(sleeper);
      return ms;
    });
    expect(elapsed).toBeLessThan(2000);
  });

  it("a worker domain has its own poll backend, and cancelling its sleeper interrupts its select", async () => {
    const asleep = new Int32Array(new SharedArrayBuffer(8));
    const r = await run(
      function* () {
        const done = yield* B.awaitExn(B.call(sleepThere, 0.01));
        const long = B.call(sleepThere, 10, asleep);
        while (Atomics.load(asleep, 0) === 0) yield* sleep(0.01);
        yield* sleep(0.05); // the worker is in its select now
        const t0 = performance.now();
        yield* B.cancel(long);
        return { done, cancelMs: performance.now() - t0, result: yield* B.awaitTask(long) };
      },
      { backend: pollBackend, domains: 1 },
    );
    expect(r.done).toEqual({ domain: 1, backend: "poll" });
    expect(r.result.ok ? r.result.value : r.result.error).toBeInstanceOf(B.Cancelled);
    expect(r.cancelMs).toBeLessThan(2000);
    expect(Atomics.load(asleep, 1)).toBeGreaterThanOrEqual(1);
  });
});
