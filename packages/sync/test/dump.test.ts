// What a task waiting on a primitive says in a dump (`B.dump()`).

import * as B from "@bobbin/core";
import { waitsOf } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { Channel, Computation, Condition, Mutex, MVar, Semaphore } from "../src/index.js";
import { pause } from "./helpers.js";

describe("dumps: what a task waits on", () => {
  it("names the primitive, and a mutex's holder", async () => {
    const seen = await B.run(function* main() {
      const m = new Mutex();
      const c = new Condition();
      const s = new Semaphore(1);
      const v = new MVar<number>();
      const ch = new Channel<number>(0);
      yield* m.lock();
      yield* s.acquire();
      const tasks = [
        B.spawn(function* locker() {
          yield* m.lock();
        }),
        B.spawn(function* condition() {
          const own = new Mutex();
          yield* own.lock();
          yield* c.wait(own);
        }),
        B.spawn(function* acquirer() {
          yield* s.acquire(1);
        }),
        B.spawn(function* taker() {
          yield* v.take();
        }),
        B.spawn(function* receiver() {
          yield* ch.recv();
        }),
      ];
      yield* pause(3);
      const d = yield* B.promise(() => B.dump());
      for (const t of tasks) yield* B.cancel(t);
      m.unlock();
      return waitsOf(d);
    });
    expect(seen.locker).toMatch(/^lock Mutex#\d+ held by main#1$/);
    expect(seen.condition).toMatch(/^wait on Condition#\d+$/);
    expect(seen.acquirer).toMatch(/^acquire 1 of Semaphore#\d+ \(0 free\)$/);
    expect(seen.taker).toMatch(/^take from MVar#\d+$/);
    expect(seen.receiver).toMatch(/^receive on Channel#\d+$/);
  });

  it("names the computation a task awaits (never a generator object)", async () => {
    const seen = await B.run(function* main() {
      const c = Computation.create<number>();
      const tasks = [
        B.spawn(function* awaiter() {
          yield* c.await();
        }),
        B.spawn(function* exnAwaiter() {
          yield* c.awaitExn();
        }),
      ];
      yield* pause(3);
      const d = yield* B.promise(() => B.dump());
      c.tryReturn(1);
      yield* B.awaitAll(tasks);
      return waitsOf(d);
    });
    expect(seen.awaiter).toMatch(/^await Computation#\d+$/);
    expect(seen.exnAwaiter).toBe(seen.awaiter);
  });
});
