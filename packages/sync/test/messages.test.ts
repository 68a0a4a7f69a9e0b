/**
 * A value given where a count belongs is named as what it is: a string is
 * quoted, so that `new Channel("1")` does not read as if it got the number 1.
 */
import { describe, expect, it } from "vitest";
import { Broadcast, Channel, Semaphore } from "../src/index.js";

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected an error");
}

describe("a string where a count belongs", () => {
  it("Channel, Broadcast and Semaphore say they got the string", () => {
    expect(thrown(() => new Channel("1" as never)).message).toMatch(/, got "1"$/);
    expect(thrown(() => new Broadcast("1" as never)).message).toMatch(/, got "1"$/);
    expect(thrown(() => new Semaphore("1" as never)).message).toMatch(/, got "1"$/);
  });
});
