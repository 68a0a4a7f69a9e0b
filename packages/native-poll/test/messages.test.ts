/**
 * A value given where another kind belongs is named as what it is: a string
 * is quoted, so that `{ batchSize: "1" }` does not read as if it got the number 1.
 */
import { describe, expect, it } from "vitest";
import { ArenaPool, errnoName, Poller, syscalls, uringBackend } from "../src/index.js";
import { noUring } from "./helpers.js";

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected an error");
}

describe("a string where a number or a name belongs", () => {
  it("the poller, the arena pool, socket, shutdown and errnoName say they got the string", () => {
    expect(thrown(() => new Poller(() => undefined, { batchSize: "1" as never })).message).toMatch(/, got "1"$/);
    expect(thrown(() => new Poller(() => undefined, { readAhead: "1" as never })).message).toMatch(/, got "1"$/);
    expect(thrown(() => new ArenaPool({ slotSize: "1" as never })).message).toMatch(/, got "1"$/);
    expect(thrown(() => new ArenaPool({ maxBytes: "1" as never })).message).toMatch(/, got "1"$/);
    expect(thrown(() => new ArenaPool({ memory: "mmapped" as never })).message).toMatch(/, got "mmapped"$/);
    expect(thrown(() => syscalls.socket("tcp5" as never)).message).toMatch(/, got "tcp5"$/);
    expect(thrown(() => syscalls.shutdown(0, "read" as never)).message).toMatch(/, got "read"$/);
    expect(thrown(() => errnoName("-1" as never)).message).toMatch(/, got "-1"$/);
  });

  it("a poller's add and poll too", () => {
    const poller = new Poller(() => undefined);
    try {
      expect(thrown(() => poller.add(0, 1, "edgy" as never)).message).toMatch(/, got "edgy"$/);
      expect(thrown(() => poller.poll("1" as never)).message).toMatch(/, got "1"$/);
    } finally {
      poller.destroy();
    }
  });

  it.skipIf(noUring !== "")(`the io_uring backend's options too${noUring}`, () => {
    expect(thrown(() => uringBackend({ entries: "8" as never })).message).toMatch(/, got "8"$/);
  });
});
