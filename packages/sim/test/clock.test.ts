import { describe, expect, it } from "vitest";
import { CallbackEvent, Clock } from "../src/clock.js";

describe("the clock's agenda", () => {
  it("fires events in time order, and events of one instant in the order they were scheduled", () => {
    const clock = new Clock();
    const fired: string[] = [];
    const at = (name: string, ms: number) => clock.schedule(new CallbackEvent(() => fired.push(`${name}@${clock.now}`)), ms);
    at("c", 30);
    at("a", 10);
    at("b1", 20);
    at("b2", 20);
    at("b3", 20);
    expect(clock.next).toBe(10);
    while (clock.advance(Infinity));
    expect(fired).toEqual(["a@10", "b1@20", "b2@20", "b3@20", "c@30"]);
    expect(clock.pending).toBe(0);
    expect(clock.next).toBe(Infinity);
  });

  it("advance fires one instant at a time and never past its limit", () => {
    const clock = new Clock();
    const fired: number[] = [];
    for (const ms of [5, 5, 9]) clock.schedule(new CallbackEvent(() => fired.push(ms)), ms);
    expect(clock.advance(4)).toBe(false);
    expect(clock.now).toBe(0);
    expect(clock.advance(Infinity)).toBe(true);
    expect(fired).toEqual([5, 5]);
    expect(clock.now).toBe(5);
    expect(clock.advance(Infinity)).toBe(true);
    expect(clock.now).toBe(9);
  });

  it("a cancelled event never fires; a rescheduled one moves; the past is now", () => {
    const clock = new Clock();
    const fired: string[] = [];
    const a = new CallbackEvent(() => fired.push("a"));
    const b = new CallbackEvent(() => fired.push("b"));
    const c = new CallbackEvent(() => fired.push("c"));
    clock.schedule(a, 10);
    clock.schedule(b, 20);
    clock.schedule(c, 30);
    clock.cancel(b);
    clock.cancel(b); // twice is fine
    clock.schedule(c, 5); // moved earlier
    while (clock.advance(Infinity));
    expect(fired).toEqual(["c", "a"]);
    clock.schedule(a, 1); // in the past: due now
    expect(a.at).toBe(clock.now);
    expect(clock.fireDue()).toBe(1);
  });

  it("an event scheduled by an event of the same instant fires in that instant", () => {
    const clock = new Clock();
    const fired: string[] = [];
    clock.schedule(
      new CallbackEvent(() => {
        fired.push("first");
        clock.schedule(new CallbackEvent(() => fired.push("then")), clock.now);
      }),
      7,
    );
    clock.advance(Infinity);
    expect(fired).toEqual(["first", "then"]);
  });

  it("keeps its order over many events (a heap, checked against a sort)", () => {
    const clock = new Clock();
    const fired: number[] = [];
    let x = 12345;
    const times: number[] = [];
    const events: CallbackEvent[] = [];
    for (let i = 0; i < 500; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      const t = x % 1000;
      times.push(t);
      const e = new CallbackEvent(() => fired.push(t));
      events.push(e);
      clock.schedule(e, t);
    }
    for (let i = 0; i < 500; i += 3) clock.cancel(events[i]!);
    const expected = times.filter((_, i) => i % 3 !== 0).sort((a, b) => a - b);
    while (clock.advance(Infinity));
    expect(fired).toEqual(expected);
  });
});
