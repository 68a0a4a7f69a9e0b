import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import * as Chat from "../../src/ch07/chat.js";
import { Pqueue } from "../../src/ch07/pqueue.js";
import { cancelLongSleep, twoParallelSleeps, twoSleeps } from "../../src/ch07/programs.js";
import { runProgram } from "../support/processes.js";

describe("chapter 7: Pqueue", () => {
  it("gives back what was inserted in order (random inputs)", () => {
    for (let round = 0; round < 50; round++) {
      const q = new Pqueue<number>((a, b) => a - b);
      const xs = Array.from({ length: round * 3 }, () => Math.floor(Math.random() * 100));
      for (const x of xs) q.insert(x);
      const out: number[] = [];
      for (let m = q.findMin(); m !== undefined; m = q.findMin()) {
        out.push(m);
        q.deleteMin();
      }
      expect(out).toEqual([...xs].sort((a, b) => a - b));
    }
    expect(() => new Pqueue<number>((a, b) => a - b).deleteMin()).toThrow(RangeError);
  });
});

describe("chapter 7: the Chat sleepers", () => {
  it("two sleeps run concurrently: both are asleep at once, and 0.2 s and 0.4 s take 0.4 s or more", async () => {
    expect(await twoSleeps(0.2, 0.4)).toBeGreaterThanOrEqual(0.39);
    // Concurrency is shown by both sleepers waiting together, not by the total staying under 0.2 + 0.4 s: a loaded
    // machine can add 0.2 s to a run on its own.
    const most = await Chat.run(function* () {
      const a = B.spawn(Chat.sleep, 0.2);
      const b = B.spawn(Chat.sleep, 0.4);
      let asleep = 0;
      while (a.status === "pending") {
        asleep = Math.max(asleep, Chat.sleepers().queue.size);
        yield* Chat.sleep(0.01);
      }
      for (const r of yield* B.awaitAll([a, b])) if (!r.ok) throw r.error;
      return asleep;
    });
    expect(most).toBe(2);
  });

  it("the book's program: sleep 1 and sleep 2 take less than 3 s", async () => {
    expect(await twoSleeps(1, 2)).toBeLessThan(3);
  });

  it("parallel sleeps use each domain's own sleepers", async () => {
    const t = await twoParallelSleeps(0.2, 0.4);
    expect(t).toBeGreaterThanOrEqual(0.39);
    // Starting two worker threads is included, which only measures the machine (1.8 s with three suites on two
    // cores); the sleeps themselves are 0.4 s run in parallel, 0.6 s one after the other.
    expect(t).toBeLessThan(5);
  });

  it("a cancelled 10-second parallel sleep ends at once: its domain's select is interrupted", async () => {
    const r = await cancelLongSleep(10);
    expect(r.result.ok).toBe(false);
    expect(r.result.ok ? null : r.result.error).toBeInstanceOf(B.Cancelled);
    // Bounds far below the sleep's 10 s (and starting a worker, 1.8 s with three suites on two cores): a cross-thread
    // cancel waits for cores too, and 0.5 s is within what a loaded machine adds.
    expect(r.cancelSeconds).toBeLessThan(5);
    expect(r.seconds).toBeLessThan(8);
    expect(r.interrupts).toBeGreaterThanOrEqual(1);
  });

  it("a cancelled sleeper is skipped, and forgotten by select", async () => {
    const left = await Chat.run(function* () {
      const long = B.spawn(Chat.sleep, 5);
      yield* B.yieldNow(); // long is asleep
      yield* B.cancel(long);
      yield* Chat.sleep(0.02); // a select runs: told of the cancelled sleeper, it drops it
      return Chat.sleepers().queue.size;
    });
    expect(left).toBe(0);
  });

  it("many sleepers wake in time order", async () => {
    const order = await Chat.run(function* () {
      const woke: number[] = [];
      const tasks = [50, 10, 40, 20, 30].map((ms) =>
        B.spawn(function* () {
          yield* Chat.sleep(ms / 1000);
          woke.push(ms);
        }),
      );
      for (const r of yield* B.awaitAll(tasks)) if (!r.ok) throw r.error;
      return woke;
    });
    expect(order).toEqual([10, 20, 30, 40, 50]);
  });

  it("a domain blocked in select is interrupted when another task wakes", async () => {
    // The main task sleeps 5 s; a Promise settles after 50 ms and wakes a task,
    // which cancels the sleep: the run ends long before 5 s.
    const t0 = performance.now();
    await Chat.run(function* () {
      const long = B.spawn(Chat.sleep, 5);
      yield* B.promise(() => new Promise((resolve) => setTimeout(resolve, 50)));
      yield* B.cancel(long);
    });
    expect(performance.now() - t0).toBeLessThan(2500); // far below the sleep's 5 s, which a run not interrupted takes
  });

  it("misuse: sleeping outside a Chat run, a negative delay, two runs at once in a thread", async () => {
    await expect(
      B.run(function* () {
        yield* Chat.sleep(0.01);
      }),
    ).rejects.toThrow(/Chat.run/);
    await expect(
      Chat.run(function* () {
        yield* Chat.sleep(-1);
      }),
    ).rejects.toBeInstanceOf(RangeError);
    const first = Chat.run(function* () {
      yield* Chat.sleep(0.05);
    });
    expect(() => Chat.run(function* () {})).toThrow(/one Chat run at a time/);
    await first;
  });

  it("node dist/ch07-sleepers.js", async () => {
    const r = await runProgram("ch07-sleepers.js");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/they slept concurrently/);
    // Before the 10 s, cancel included; the time since the start includes starting a worker thread (1.4 s with
    // three suites on two cores), and a cross-thread cancel waits for cores too.
    expect(r.stdout).toMatch(/call \(sleep 10\), cancel: cancelled after \d\.\d+ s \(cancel took \d\.\d+ s;.*→ Cancelled/);
  });
});
