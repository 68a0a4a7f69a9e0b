/**
 * A value given where a count belongs is named as what it is: a string is
 * quoted, so that `new Channel("1")` does not read as if it got the number 1.
 */
import { describe, expect, it } from "vitest";
import { Broadcast, Channel, Semaphore } from "../src/index.js";

describe("a string where a count belongs", () => {
  it("Channel, Broadcast and Semaphore say they got the string", () => {
    expect(() => new Channel("1" as never)).toThrow(/, got "1"$/);
    expect(() => new Broadcast("1" as never)).toThrow(/, got "1"$/);
    expect(() => new Semaphore("1" as never)).toThrow(/, got "1"$/);
  });
});
