/** timeout: a select case on a Node timer, cleared on every exit path. */

import { EventEmitter } from "node:events";
import { handleCount } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import { settleOperation } from "./support/helpers.js";

describe("timeout", () => {
  it("on its own, sleeps at least `ms` and leaves no timer", async () => {
    const before = handleCount("Timeout");
    const started = performance.now();
    await B.run(function* () {
      yield* B.timeout(30);
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(29);
    expect(handleCount("Timeout")).toBeLessThanOrEqual(before);
  });

  it("keeps the run alive while a task waits on it: no Deadlock", async () => {
    expect(await settleOperation(B.select([B.timeout(20)]))).toEqual({ ok: true, value: { index: 0, value: undefined } });
  });

  it("its timer is cleared when another case wins", async () => {
    const before = handleCount("Timeout");
    await B.run(function* () {
      const r = yield* B.select([B.timeout(60_000), B.timeout(5)]);
      expect(r.index).toBe(1);
      expect(handleCount("Timeout")).toBeLessThanOrEqual(before);
    });
  });

  it("its timer is cleared when the waiting task is cancelled", async () => {
    const before = handleCount("Timeout");
    await B.run(function* () {
      const sleeper = B.spawn(function* () {
        yield* B.timeout(60_000);
      });
      yield* B.yieldNow();
      expect(handleCount("Timeout")).toBe(before + 1);
      yield* B.cancel(sleeper);
      expect(handleCount("Timeout")).toBeLessThanOrEqual(before);
    });
  });

  it("timeout(0) happens at once: last in a select, it is taken when no other case is ready", async () => {
    const emitter = new EventEmitter();
    const before = handleCount("Timeout");
    const r = await settleOperation(B.select([B.once(emitter, "never"), B.timeout(0)]));
    expect(r).toEqual({ ok: true, value: { index: 1, value: undefined } });
    expect(handleCount("Timeout")).toBeLessThanOrEqual(before);
    expect(emitter.listenerCount("never")).toBe(0);
  });

  it("refuses a delay Node's timers cannot take", () => {
    for (const ms of [-1, Number.NaN, 2 ** 31, Number.POSITIVE_INFINITY, "5"]) expect(() => B.timeout(ms as number)).toThrow(RangeError);
  });
});
