/** once and on: events from emitters and EventTargets, listeners removed on every exit path. */
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import { caught, errorOf, settle, yieldTimes } from "./support/helpers.js";

/** Every listener of `emitter`, all events together. */
function listeners(emitter: EventEmitter): number {
  return emitter.eventNames().reduce((n, name) => n + emitter.listenerCount(name), 0);
}

describe("once", () => {
  it("waits for the event and evaluates to its arguments; its listeners are gone", async () => {
    const emitter = new EventEmitter();
    await B.run(function* () {
      const waiter = B.spawn(function* () {
        return yield* B.once<[number, string]>(emitter, "ready");
      });
      yield* B.yieldNow();
      expect(listeners(emitter)).toBe(2); // the event and "error"
      emitter.emit("ready", 1, "a");
      expect(listeners(emitter)).toBe(0);
      expect(yield* B.awaitExn(waiter)).toEqual([1, "a"]);
    });
  });

  it('throws the error of an "error" event', async () => {
    const emitter = new EventEmitter();
    const boom = new Error("boom");
    const r = await settle(function* () {
      setImmediate(() => emitter.emit("error", boom));
      yield* B.once(emitter, "ready");
    });
    expect(errorOf(r)).toBe(boom);
    expect(listeners(emitter)).toBe(0);
  });

  it('waits for "error" itself when asked to', async () => {
    const emitter = new EventEmitter();
    const boom = new Error("boom");
    const r = await settle(function* () {
      setImmediate(() => emitter.emit("error", boom));
      return yield* B.once(emitter, "error");
    });
    expect(r).toEqual({ ok: true, value: [boom] });
  });

  it("listens on an EventTarget (the value is [event])", async () => {
    const target = new EventTarget();
    const r = await settle(function* () {
      setImmediate(() => target.dispatchEvent(new Event("ping")));
      const [event] = yield* B.once<[Event]>(target, "ping");
      return event.type;
    });
    expect(r).toEqual({ ok: true, value: "ping" });
  });

  it("a cancelled wait leaves no listener", async () => {
    const emitter = new EventEmitter();
    await B.run(function* () {
      const waiter = B.spawn(function* () {
        yield* B.once(emitter, "ready");
      });
      yield* B.yieldNow();
      yield* B.cancel(waiter);
      expect(listeners(emitter)).toBe(0);
    });
  });

  it("a once that lost a select leaves no listener, and the event is not consumed by it", async () => {
    const emitter = new EventEmitter();
    await B.run(function* () {
      const r = yield* B.select([B.once(emitter, "ready"), B.timeout(5)]);
      expect(r.index).toBe(1);
      expect(listeners(emitter)).toBe(0);
    });
  });

  it("refuses what is neither an emitter nor an EventTarget, and bad event names", () => {
    expect(() => B.once({} as never, "x")).toThrow(TypeError);
    expect(() => B.once(new EventEmitter(), 42 as never)).toThrow(TypeError);
    expect(() => B.once(new EventTarget(), Symbol("x"))).toThrow(TypeError);
  });
});

describe("on", () => {
  it("delivers every event in order, buffered while nobody reads", async () => {
    const emitter = new EventEmitter();
    const seen = await B.run(function* () {
      using events = B.on<[number]>(emitter, "n");
      for (let i = 0; i < 3; i++) emitter.emit("n", i);
      expect(events.size).toBe(3);
      const out: number[] = [];
      for (let i = 0; i < 3; i++) {
        const r = yield* events.next();
        if (!r.done) out.push(r.value[0]);
      }
      const later = B.spawn(function* () {
        const r = yield* events.next();
        return r.done ? -1 : r.value[0];
      });
      yield* B.yieldNow();
      emitter.emit("n", 3);
      out.push(yield* B.awaitExn(later));
      return out;
    });
    expect(seen).toEqual([0, 1, 2, 3]);
    expect(listeners(emitter)).toBe(0); // `using` closed it
  });

  it("ends at a close event, once the events before it were read", async () => {
    const emitter = new EventEmitter();
    const got = await B.run(function* () {
      const lines = B.on<[string]>(emitter, "line", { close: ["close", "end"] });
      emitter.emit("line", "a");
      emitter.emit("end");
      emitter.emit("line", "after the end");
      expect(lines.isListening).toBe(false);
      expect(listeners(emitter)).toBe(0);
      const out: string[] = [];
      for (let r = yield* lines.next(); !r.done; r = yield* lines.next()) out.push(r.value[0]);
      expect(yield* lines.next()).toEqual({ done: true });
      return out;
    });
    expect(got).toEqual(["a"]);
  });

  it('an "error" event fails it after the events before it; then it is done', async () => {
    const emitter = new EventEmitter();
    const boom = new Error("boom");
    await B.run(function* () {
      const events = B.on(emitter, "data");
      emitter.emit("data", 1);
      emitter.emit("error", boom);
      expect(listeners(emitter)).toBe(0);
      expect(yield* events.next()).toEqual({ done: false, value: [1] });
      expect(yield* caught(events.next())).toBe(boom);
      expect(yield* events.next()).toEqual({ done: true });
    });
  });

  it("a reader waiting when the error comes gets it", async () => {
    const emitter = new EventEmitter();
    const boom = new Error("boom");
    const r = await settle(function* () {
      const events = B.on(emitter, "data");
      setImmediate(() => emitter.emit("error", boom));
      yield* events.next();
    });
    expect(errorOf(r)).toBe(boom);
  });

  it("one event more than its capacity fails it with EventOverflow, after the buffered ones", async () => {
    const emitter = new EventEmitter();
    await B.run(function* () {
      const events = B.on<[number]>(emitter, "n", { capacity: 2 });
      for (let i = 0; i < 5; i++) emitter.emit("n", i);
      expect(listeners(emitter)).toBe(0);
      expect(yield* events.next()).toEqual({ done: false, value: [0] });
      expect(yield* events.next()).toEqual({ done: false, value: [1] });
      const thrown = yield* caught(events.next());
      expect(thrown).toBeInstanceOf(B.EventOverflow);
      expect((thrown as B.EventOverflow).capacity).toBe(2);
    });
  });

  it("close() drops what was not read, ends waiting readers and takes the listeners off", async () => {
    const emitter = new EventEmitter();
    await B.run(function* () {
      const events = B.on(emitter, "data");
      const reader = B.spawn(function* () {
        return yield* events.next();
      });
      yield* B.yieldNow();
      events.close();
      events.close();
      expect(listeners(emitter)).toBe(0);
      expect(yield* B.awaitExn(reader)).toEqual({ done: true });
    });
  });

  it("a reader cancelled while waiting leaves; the stream keeps its events for the next one", async () => {
    const emitter = new EventEmitter();
    await B.run(function* () {
      const events = B.on<[number]>(emitter, "n");
      const reader = B.spawn(function* () {
        yield* events.next();
      });
      yield* B.yieldNow();
      yield* B.cancel(reader);
      emitter.emit("n", 1);
      expect(events.size).toBe(1);
      expect(yield* events.next()).toEqual({ done: false, value: [1] });
      events.close();
    });
  });

  it("is a select case: a next() that lost took no event", async () => {
    const emitter = new EventEmitter();
    await B.run(function* () {
      const events = B.on<[number]>(emitter, "n");
      const r = yield* B.select([events.next(), B.timeout(5)]);
      expect(r.index).toBe(1);
      emitter.emit("n", 9);
      const s = yield* B.select([events.next(), B.timeout(5)]);
      expect(s).toEqual({ index: 0, value: { done: false, value: [9] } });
      events.close();
    });
  });

  it("listens on an EventTarget", async () => {
    const target = new EventTarget();
    await B.run(function* () {
      using events = B.on<[Event]>(target, "tick", { capacity: 4 });
      target.dispatchEvent(new Event("tick"));
      yield* yieldTimes(1);
      const r = yield* events.next();
      expect(r.done === false && r.value[0].type).toBe("tick");
    });
  });

  it("refuses a bad capacity, bad close events and bad options", () => {
    const emitter = new EventEmitter();
    for (const capacity of [0, 1.5, -2, Number.NaN]) expect(() => B.on(emitter, "x", { capacity })).toThrow(RangeError);
    expect(() => B.on(emitter, "x", { close: [42 as never] })).toThrow(TypeError);
    expect(() => B.on(emitter, "x", null as never)).toThrow(TypeError);
    expect(listeners(emitter)).toBe(0);
  });
});
