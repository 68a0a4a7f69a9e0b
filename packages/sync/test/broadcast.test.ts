import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { Broadcast, type BroadcastReceived, ChannelClosed } from "../src/index.js";
import { drainSubscription } from "./drain.js";
import { forever, pause } from "./helpers.js";

describe("Broadcast", () => {
  it("every subscriber receives every value published after it subscribed, in order", async () => {
    const room = new Broadcast<string>(8);
    await B.run(function* () {
      const early = room.subscribe();
      room.publish("a");
      const late = room.subscribe();
      expect(room.publish("b")).toBe(2);
      const readers = [early, late].map((sub) => B.spawn(drainSubscription<string>, sub));
      yield* pause(2);
      room.publish("c"); // handed straight to the waiting readers
      room.close();
      expect(yield* B.awaitAll(readers)).toEqual([
        { ok: true, value: ["a", "b", "c"] },
        { ok: true, value: ["b", "c"] },
      ]);
    });
  });

  it("a slow subscriber loses its oldest values and learns how many, without holding up the publisher or the others", async () => {
    const feed = new Broadcast<number>(3);
    await B.run(function* () {
      const slow = feed.subscribe();
      const fast = feed.subscribe();
      const got: BroadcastReceived<number>[] = [];
      for (let i = 0; i < 5; i++) {
        feed.publish(i); // never waits
        got.push((yield* fast.recv()) as BroadcastReceived<number>);
      }
      expect(got.map((r) => (r.done ? -1 : r.value))).toEqual([0, 1, 2, 3, 4]);
      expect(slow.size).toBe(3);
      expect(slow.missed).toBe(2);
      expect(yield* slow.recv()).toEqual({ done: false, value: 2, missed: 2 });
      expect(yield* slow.recv()).toEqual({ done: false, value: 3, missed: 0 });
      feed.publish(5);
      feed.publish(6);
      feed.publish(7); // drops 4
      expect(yield* slow.recv()).toEqual({ done: false, value: 5, missed: 1 });
      expect(slow.missed).toBe(3);
      slow.close();
      fast.close();
    });
  });

  it("close: subscribers receive what they buffered, then { done: true }; publish throws ChannelClosed", async () => {
    const b = new Broadcast<number>(4);
    await B.run(function* () {
      const sub = b.subscribe();
      b.publish(1);
      expect(b.close()).toBe(true);
      expect(b.close()).toBe(false);
      expect(() => b.publish(2)).toThrow(ChannelClosed);
      expect(yield* drainSubscription(sub)).toEqual([1]);
      expect(b.subscribe().tryRecv()).toEqual({ done: true });
      expect(b.subscribers).toBe(0);
    });
  });

  it("a subscription closed (or disposed) receives nothing more, and its waiting readers end", async () => {
    const b = new Broadcast<number>(4);
    await B.run(function* () {
      const sub = b.subscribe();
      const reader = B.spawn(function* () {
        return yield* sub.recv();
      });
      yield* pause(2);
      sub.close();
      expect(b.subscribers).toBe(0);
      expect(yield* B.awaitExn(reader)).toEqual({ done: true });
      {
        using scoped = b.subscribe();
        b.publish(1);
        expect(scoped.size).toBe(1);
      }
      expect(b.subscribers).toBe(0);
      expect(b.publish(2)).toBe(0);
    });
  });

  it("a reader cancelled while waiting took nothing; one woken then cancelled keeps its value", async () => {
    const b = new Broadcast<number>(4);
    await B.run(function* () {
      const sub = b.subscribe();
      const cancelled = B.spawn(function* () {
        yield* sub.recv();
      });
      yield* pause(2);
      yield* B.cancel(cancelled);
      expect(sub.receivers.size).toBe(0);
      b.publish(1);
      expect(sub.tryRecv()).toEqual({ done: false, value: 1, missed: 0 });

      let got: unknown;
      const woken = B.spawn(function* () {
        got = yield* sub.recv();
        yield* forever();
      });
      yield* pause(2);
      b.publish(2);
      yield* B.cancel(woken);
      expect(got).toEqual({ done: false, value: 2, missed: 0 });
      b.close();
    });
  });

  it("recv is a select case: one that lost took nothing", async () => {
    const b = new Broadcast<string>(4);
    await B.run(function* () {
      const sub = b.subscribe();
      const r = yield* B.select([sub.recv(), B.timeout(5)]);
      expect(r.index).toBe(1);
      expect(sub.receivers.size).toBe(0);
      b.publish("x");
      expect(yield* B.select([sub.recv(), B.timeout(5)])).toEqual({ index: 0, value: { done: false, value: "x", missed: 0 } });
      b.close();
    });
  });

  it("refuses a capacity that is not an integer ≥ 1 or Infinity", () => {
    for (const capacity of [0, -1, 2.5, Number.NaN]) expect(() => new Broadcast(capacity)).toThrow(RangeError);
    expect(new Broadcast(Number.POSITIVE_INFINITY).capacity).toBe(Number.POSITIVE_INFINITY);
  });
});
