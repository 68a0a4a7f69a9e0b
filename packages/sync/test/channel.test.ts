import * as B from "@bobbin/core";
import { prng } from "@bobbin/test-support";
import { describe, expect, it, vi } from "vitest";
import { Channel, ChannelClosed, EMPTY, END } from "../src/index.js";
import { drain } from "./drain.js";
import { forever, pause } from "./helpers.js";

/**
 * Watches the timers the code under test sets (with the global `setTimeout`)
 * until `stop()`: `pending()` counts those neither fired nor cleared. Counting
 * every timer of the process instead would count vitest's own, which come and
 * go as it reports, more often on a loaded machine.
 */
function watchTimers(): { pending(): number; stop(): void } {
  const live = new Set<NodeJS.Timeout>();
  const { setTimeout: set, clearTimeout: clear } = globalThis;
  const setSpy = vi.spyOn(globalThis, "setTimeout").mockImplementation(((
    fn: (...args: unknown[]) => void,
    ms?: number,
    ...args: unknown[]
  ) => {
    const timer: NodeJS.Timeout = set(() => {
      live.delete(timer);
      fn(...args);
    }, ms);
    live.add(timer);
    return timer;
  }) as typeof setTimeout);
  const clearSpy = vi.spyOn(globalThis, "clearTimeout").mockImplementation((timer) => {
    live.delete(timer as NodeJS.Timeout);
    clear(timer);
  });
  return {
    pending: () => live.size,
    stop() {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    },
  };
}

/** What `yield* op` throws; a test failure when it does not throw. */
function* thrownBy(op: B.Operation<unknown>): Generator<B.Instruction, unknown, unknown> {
  try {
    yield* op;
  } catch (error) {
    return error;
  }
  throw new Error("expected the operation to throw");
}

describe("Channel: send, recv, close", () => {
  it("a rendezvous channel makes each send wait for a receiver, and each receive for a sender", async () => {
    const ch = new Channel<number>();
    const log: string[] = [];
    await B.run(function* () {
      const sender = B.spawn(function* () {
        for (let i = 0; i < 3; i++) {
          yield* ch.send(i);
          log.push(`sent ${i}`);
        }
        ch.close();
      });
      yield* pause(3);
      expect(ch.waiters.senders).toBe(1);
      expect(ch.size).toBe(0);
      log.push("receiving");
      expect(yield* drain(ch)).toEqual([0, 1, 2]);
      yield* B.awaitExn(sender);
    });
    expect(log[0]).toBe("receiving");
  });

  it("a buffered channel holds `capacity` values before a send waits", async () => {
    const ch = new Channel<number>(2);
    await B.run(function* () {
      yield* ch.send(1);
      yield* ch.send(2);
      expect(ch.size).toBe(2);
      expect(ch.trySend(3)).toBe(false);
      const third = B.spawn(function* () {
        yield* ch.send(3);
      });
      yield* pause(2);
      expect(ch.waiters.senders).toBe(1);
      expect(yield* ch.recv()).toEqual(1);
      // The waiting sender's value took the room at once.
      expect(ch.size).toBe(2);
      yield* B.awaitExn(third);
      ch.close();
      expect(yield* drain(ch)).toEqual([2, 3]);
    });
  });

  it("an unbounded channel never makes a send wait", async () => {
    const ch = new Channel<number>(Number.POSITIVE_INFINITY);
    await B.run(function* () {
      for (let i = 0; i < 10_000; i++) yield* ch.send(i);
      expect(ch.size).toBe(10_000);
      ch.close();
      const got = yield* drain(ch);
      expect(got.length).toBe(10_000);
      expect(got.every((v, i) => v === i)).toBe(true);
    });
  });

  it("close: receivers get what is buffered, then END; sends throw ChannelClosed", async () => {
    const ch = new Channel<string>(4);
    const r = await B.run(function* () {
      yield* ch.send("a");
      expect(ch.close()).toBe(true);
      expect(ch.close()).toBe(false);
      expect(ch.isClosed).toBe(true);
      expect(() => ch.trySend("b")).toThrow(ChannelClosed);
      const thrown = yield* thrownBy(ch.send("b"));
      expect(thrown).toBeInstanceOf(ChannelClosed);
      return [yield* ch.recv(), yield* ch.recv(), ch.tryRecv()];
    });
    expect(r).toEqual(["a", END, END]);
  });

  it("close wakes waiting receivers with END and waiting senders with ChannelClosed", async () => {
    const empty = new Channel<number>();
    const full = new Channel<number>(1);
    await B.run(function* () {
      const receiver = B.spawn(function* () {
        return yield* empty.recv();
      });
      yield* full.send(1);
      const sender = B.spawn(function* () {
        yield* full.send(2);
      });
      yield* pause(2);
      empty.close();
      full.close();
      expect(yield* B.awaitExn(receiver)).toEqual(END);
      expect((yield* B.awaitTask(sender)).ok).toBe(false);
      expect(yield* drain(full)).toEqual([1]);
    });
  });

  it("serves waiting receivers and senders in FIFO order", async () => {
    const ch = new Channel<string>();
    await B.run(function* () {
      const receivers = ["r0", "r1", "r2"].map((name) =>
        B.spawn(function* () {
          const v = yield* ch.recv();
          return `${name}=${v === END ? "end" : v}`;
        }),
      );
      yield* pause(2);
      for (const v of ["a", "b", "c"]) yield* ch.send(v);
      expect(yield* B.awaitAll(receivers)).toEqual([
        { ok: true, value: "r0=a" },
        { ok: true, value: "r1=b" },
        { ok: true, value: "r2=c" },
      ]);
      const senders = ["x", "y", "z"].map((v) =>
        B.spawn(function* () {
          yield* ch.send(v);
        }),
      );
      yield* pause(2);
      ch.close(); // the waiting senders fail; none of their values was delivered
      const results = yield* B.awaitAll(senders);
      expect(results.every((r) => !r.ok && r.error instanceof ChannelClosed)).toBe(true);
      expect(ch.tryRecv()).toEqual(END);
    });
  });

  it("trySend and tryRecv never wait, and meet waiting tasks", async () => {
    const ch = new Channel<number>();
    await B.run(function* () {
      expect(ch.trySend(1)).toBe(false); // nobody receives
      expect(ch.tryRecv()).toBe(EMPTY);
      const receiver = B.spawn(function* () {
        return yield* ch.recv();
      });
      yield* pause(2);
      expect(ch.trySend(5)).toBe(true);
      expect(yield* B.awaitExn(receiver)).toEqual(5);
      const sender = B.spawn(function* () {
        yield* ch.send(6);
      });
      yield* pause(2);
      expect(ch.tryRecv()).toEqual(6);
      yield* B.awaitExn(sender);
    });
  });

  it("refuses to carry END or EMPTY: they are what receives evaluate to", () => {
    const ch = new Channel<unknown>(4);
    expect(() => ch.trySend(END)).toThrow(TypeError);
    expect(() => ch.send(EMPTY)).toThrow(TypeError);
    expect(ch.size).toBe(0);
  });

  it("recv() is one operation, used by any number of tasks at once", async () => {
    const ch = new Channel<number>();
    expect(ch.recv()).toBe(ch.recv());
    await B.run(function* () {
      const receivers = [0, 1, 2].map(() =>
        B.spawn(function* () {
          return yield* ch.recv();
        }),
      );
      yield* pause(2);
      expect(ch.waiters.receivers).toBe(3);
      for (const v of [10, 11, 12]) yield* ch.send(v);
      expect(yield* B.awaitAll(receivers)).toEqual([10, 11, 12].map((value) => ({ ok: true, value })));
    });
  });

  it("an operation from send(v) is used once: a second yield* of it is a TypeError, and sends nothing", async () => {
    const ch = new Channel<number>(4);
    await B.run(function* () {
      const op = ch.send(1);
      yield* op;
      const thrown = yield* thrownBy(op);
      expect(thrown).toBeInstanceOf(TypeError);
      expect(String(thrown)).toMatch(/used again.*call send\(v\) again/);
      expect(ch.size).toBe(1);
    });
  });

  it("sends made before any is used are distinct and each delivers its own value", async () => {
    const ch = new Channel<number>(4);
    const got = await B.run(function* () {
      const ops = [ch.send(1), ch.send(2), ch.send(3)];
      expect(new Set(ops).size).toBe(3);
      for (const op of ops.reverse()) yield* op;
      ch.close();
      return yield* drain(ch);
    });
    expect(got).toEqual([3, 2, 1]);
  });

  it("the channel reuses a used send: an operation kept and used after the next send(v) fails, at its owner's use or its own", async () => {
    const ch = new Channel<number>(4);
    await B.run(function* () {
      const kept = ch.send(1);
      yield* kept;
      const next = ch.send(2);
      expect(next).toBe(kept); // the same object, reused: that is why a send allocates nothing
      yield* kept; // sends 2: the operation is next's now
      const thrown = yield* thrownBy(next);
      expect(thrown).toBeInstanceOf(TypeError);
      ch.close();
      expect(yield* drain(ch)).toEqual([1, 2]); // each value once, none twice
    });
  });

  it("refuses a capacity that is not an integer ≥ 0 or Infinity", () => {
    for (const capacity of [-1, 1.5, Number.NaN, "2"]) expect(() => new Channel(capacity as number)).toThrow(RangeError);
  });
});

describe("Channel: cancellation at every wait", () => {
  it("a receive cancelled while waiting took nothing: the value goes to the next receiver", async () => {
    const ch = new Channel<number>();
    await B.run(function* () {
      const first = B.spawn(function* () {
        return yield* ch.recv();
      });
      const second = B.spawn(function* () {
        return yield* ch.recv();
      });
      yield* pause(2);
      yield* B.cancel(first);
      expect(ch.waiters.receivers).toBe(1);
      yield* ch.send(1);
      expect(yield* B.awaitExn(second)).toEqual(1);
    });
  });

  it("a send cancelled while waiting delivered nothing", async () => {
    const ch = new Channel<number>(1);
    await B.run(function* () {
      yield* ch.send(1);
      const sender = B.spawn(function* () {
        yield* ch.send(2);
      });
      yield* pause(2);
      yield* B.cancel(sender);
      expect(ch.waiters.senders).toBe(0);
      ch.close();
      expect(yield* drain(ch)).toEqual([1]);
    });
  });

  it("a receiver woken with a value, then cancelled, keeps the value (it is not lost)", async () => {
    const ch = new Channel<number>();
    let got: unknown;
    await B.run(function* () {
      const receiver = B.spawn(function* () {
        got = yield* ch.recv();
        yield* forever();
      });
      yield* pause(2);
      expect(ch.trySend(7)).toBe(true);
      yield* B.cancel(receiver);
    });
    expect(got).toEqual(7);
  });

  it("a rendezvous sender woken by a receiver, then cancelled, delivered its value", async () => {
    const ch = new Channel<number>();
    await B.run(function* () {
      const sender = B.spawn(function* () {
        yield* ch.send(9);
        yield* forever();
      });
      yield* pause(2);
      expect(ch.tryRecv()).toEqual(9);
      yield* B.cancel(sender);
      expect(ch.waiters.senders).toBe(0);
    });
  });
});

describe("Channel in select", () => {
  it("exactly one case happens: the send that lost delivered nothing, the receive that lost took nothing", async () => {
    const input = new Channel<number>(1);
    const output = new Channel<string>();
    await B.run(function* () {
      yield* input.send(1);
      const r = yield* B.select([output.send("x"), input.recv()]);
      expect(r).toEqual({ index: 1, value: 1 });
      expect(output.waiters.senders).toBe(0);
      expect(output.tryRecv()).toBe(EMPTY);

      yield* input.send(2);
      const receiver = B.spawn(function* () {
        return yield* output.recv();
      });
      yield* pause(2);
      const s = yield* B.select([output.send("y"), input.recv()]);
      expect(s.index).toBe(0); // the first case that can happen wins
      expect(yield* B.awaitExn(receiver)).toEqual("y");
      expect(input.size).toBe(1); // the receive that lost took nothing
    });
  });

  it("waits on all its cases, and the losers are withdrawn", async () => {
    const a = new Channel<number>();
    const b = new Channel<number>();
    await B.run(function* () {
      const chooser = B.spawn(function* () {
        return yield* B.select([a.recv(), b.send(10)]);
      });
      yield* pause(2);
      expect([a.waiters.receivers, b.waiters.senders]).toEqual([1, 1]);
      expect(yield* b.recv()).toEqual(10);
      expect(yield* B.awaitExn(chooser)).toEqual({ index: 1, value: undefined });
      expect([a.waiters.receivers, b.waiters.senders]).toEqual([0, 0]);
      expect(a.trySend(1)).toBe(false); // nobody receives on a any more
    });
  });

  it("two selects meet on a rendezvous channel", async () => {
    const ch = new Channel<string>();
    const idle = new Channel<string>();
    const unread = new Channel<string>();
    await B.run(function* () {
      const receiver = B.spawn(function* () {
        return yield* B.select([idle.recv(), ch.recv()]);
      });
      yield* pause(2);
      const s = yield* B.select([unread.send("no"), ch.send("hi")]);
      expect(s.index).toBe(1);
      expect(yield* B.awaitExn(receiver)).toEqual({ index: 1, value: "hi" });
      expect([idle.waiters, unread.waiters]).toEqual([
        { senders: 0, receivers: 0 },
        { senders: 0, receivers: 0 },
      ]);
    });
  });

  it("tasks in recv() and selects with a recv() case wait in one queue, served in the order they came", async () => {
    const ch = new Channel<string>();
    const other = new Channel<string>();
    await B.run(function* () {
      const order: string[] = [];
      const plain = B.spawn(function* () {
        order.push(`plain=${String(yield* ch.recv())}`);
      });
      yield* pause(1);
      const selecting = B.spawn(function* () {
        const r = yield* B.select([other.recv(), ch.recv()]);
        order.push(`select=${String(r.value)}`);
      });
      yield* pause(1);
      const last = B.spawn(function* () {
        order.push(`last=${String(yield* ch.recv())}`);
      });
      yield* pause(2);
      expect(ch.waiters.receivers).toBe(3);
      for (const v of ["a", "b", "c"]) yield* ch.send(v);
      yield* B.awaitAll([plain, selecting, last]);
      expect(order).toEqual(["plain=a", "select=b", "last=c"]);
      expect(other.waiters.receivers).toBe(0);
    });
  });

  it("a send used in a select is used: the select cannot be run again", async () => {
    const ch = new Channel<number>(4);
    await B.run(function* () {
      const twice = B.select([ch.send(1), B.timeout(5)]);
      expect((yield* twice).index).toBe(0);
      const thrown = yield* thrownBy(twice);
      expect(thrown).toBeInstanceOf(TypeError);
      expect(ch.size).toBe(1);
    });
  });

  it("a select never meets itself (a send and a receive on the same channel)", async () => {
    const ch = new Channel<number>();
    const r = await B.run(function* () {
      return yield* B.select([ch.recv(), ch.send(1), B.timeout(5)]);
    });
    expect(r.index).toBe(2);
    expect(ch.waiters).toEqual({ senders: 0, receivers: 0 });
  });

  it("a send on a closed channel makes the select throw ChannelClosed", async () => {
    const ch = new Channel<number>();
    ch.close();
    const r = await B.run(function* () {
      try {
        yield* B.select([ch.send(1), B.timeout(5)]);
        return "no error";
      } catch (error) {
        return error;
      }
    });
    expect(r).toBeInstanceOf(ChannelClosed);
  });

  it("a select waiting on channels and a timeout: the timeout wins, nothing is left waiting, no timer left", async () => {
    const a = new Channel<number>();
    const b = new Channel<number>(1);
    const timers = watchTimers();
    try {
      await B.run(function* () {
        yield* b.send(0); // b is full: a send waits
        const r = yield* B.select([a.recv(), b.send(1), B.timeout(10)]);
        expect(r.index).toBe(2);
        expect([a.waiters.receivers, b.waiters.senders]).toEqual([0, 0]);
        expect(b.size).toBe(1);
      });
      expect(timers.pending()).toBe(0);
    } finally {
      timers.stop();
    }
  });

  it("a select cancelled while waiting withdraws every case", async () => {
    const a = new Channel<number>();
    const b = new Channel<number>();
    const timers = watchTimers();
    try {
      await B.run(function* () {
        const chooser = B.spawn(function* () {
          yield* B.select([a.recv(), b.send(1), B.timeout(60_000)]);
        });
        yield* pause(2);
        expect(timers.pending()).toBe(1); // the timeout case's
        yield* B.cancel(chooser);
        expect([a.waiters.receivers, b.waiters.senders]).toEqual([0, 0]);
        expect(timers.pending()).toBe(0);
        expect(b.tryRecv()).toBe(EMPTY); // the cancelled send delivered nothing
      });
    } finally {
      timers.stop();
    }
  });

  it("a channel that closes while a select waits on it ends the select with that case", async () => {
    const ch = new Channel<number>();
    await B.run(function* () {
      const chooser = B.spawn(function* () {
        return yield* B.select([ch.recv(), B.timeout(60_000)]);
      });
      yield* pause(2);
      ch.close();
      expect(yield* B.awaitExn(chooser)).toEqual({ index: 0, value: END });
    });
  });
});

describe("Channel under load", () => {
  it("every value is received exactly once, whatever selects, timeouts and cancellations happen (seeded)", async () => {
    for (const seed of [1, 2, 3]) {
      const random = prng(seed);
      const channels = [new Channel<number>(0), new Channel<number>(3)];
      const received: number[] = [];
      const PER_PRODUCER = 200;
      const PRODUCERS = 4;
      await B.run(
        function* () {
          const producers = Array.from({ length: PRODUCERS }, (_, p) =>
            B.spawn(function* () {
              for (let i = 0; i < PER_PRODUCER; i++) {
                const v = p * PER_PRODUCER + i;
                // Offer it to either channel; on a timeout, try again: a send that lost delivered nothing.
                for (;;) {
                  const r = yield* B.select([channels[0]!.send(v), channels[1]!.send(v), B.timeout(random() < 0.1 ? 0 : 1)]);
                  if (r.index !== 2) break;
                }
              }
            }),
          );
          const consumer = function* (): Generator<B.Instruction, never, unknown> {
            for (;;) {
              const r = yield* B.select([channels[0]!.recv(), channels[1]!.recv()]);
              if (r.value !== END) received.push(r.value);
              if (random() < 0.3) yield* B.yieldNow();
            }
          };
          // Consumers come and go: each is cancelled after a while (a cancelled receive took nothing).
          while (producers.some((t) => t.status === "pending")) {
            const c = B.spawn(consumer);
            yield* pause(1 + Math.floor(random() * 20));
            yield* B.cancel(c);
          }
          yield* B.awaitAll(producers);
          // Anything still buffered is received last.
          for (const ch of channels) {
            ch.close();
            received.push(...(yield* drain(ch)));
          }
          expect(channels.map((ch) => ch.waiters)).toEqual([
            { senders: 0, receivers: 0 },
            { senders: 0, receivers: 0 },
          ]);
        },
        { seed },
      );
      expect(received.length).toBe(PRODUCERS * PER_PRODUCER);
      expect(new Set(received).size).toBe(PRODUCERS * PER_PRODUCER);
    }
  });

  it("outside a task, recv and send refuse to wait", () => {
    const ch = new Channel<number>();
    expect(() => ch.recv()[Symbol.iterator]().next()).toThrow(TypeError);
    expect(() => ch.send(1)[Symbol.iterator]().next()).toThrow(TypeError);
  });
});
