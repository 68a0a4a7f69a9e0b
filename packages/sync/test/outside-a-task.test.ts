/** Used outside a task, each primitive names the operation the program called (not core's `self()`). */
import { thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { Condition, Mutex, MVar, Ownership, Semaphore } from "../src/index.js";

const RULE = "must be called from inside a task: start one with B.run(function* () { … })";

describe("primitives used outside a task", () => {
  it.each([
    ["Mutex.lock()", () => new Mutex().lock()],
    ["Mutex.unlock()", () => new Mutex().unlock()],
    ["Mutex.tryLock()", () => new Mutex().tryLock()],
    [
      "Condition.wait()",
      () => {
        const m = new Mutex();
        return new Condition().wait(m);
      },
    ],
    ["Semaphore.acquire()", () => new Semaphore(0).acquire()],
    ["MVar.take()", () => new MVar<number>().take()],
    ["MVar.put()", () => new MVar<number>().put(1)],
    ["Ownership.own()", () => Ownership.own(Ownership.create(1, () => undefined))],
  ])("%s names itself and says where it may be called", (name, fn) => {
    const error = thrownBy(fn);
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe(`${name} ${RULE}`);
    expect(error.message).not.toContain("self()");
  });
});
