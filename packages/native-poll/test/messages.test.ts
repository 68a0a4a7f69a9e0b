/**
 * A value given where another kind belongs is named as what it is: a string
 * is quoted, so that `{ batchSize: "1" }` does not read as if it got the number 1.
 */
import { describe, expect, it } from "vitest";
import { errnoName, Poller, syscalls } from "../src/backend/index.js";
import { ArenaPool, uringBackend } from "../src/index.js";
import { noUring } from "./helpers.js";

describe("a string where a number or a name belongs", () => {
  it("the poller, the arena pool, socket, shutdown and errnoName say they got the string", () => {
    expect(() => new Poller(() => undefined, { batchSize: "1" as never })).toThrow(/, got "1"$/);
    expect(() => new Poller(() => undefined, { readAhead: "1" as never })).toThrow(/, got "1"$/);
    expect(() => new ArenaPool({ slotSize: "1" as never })).toThrow(/, got "1"$/);
    expect(() => new ArenaPool({ maxBytes: "1" as never })).toThrow(/, got "1"$/);
    expect(() => new ArenaPool({ memory: "mmapped" as never })).toThrow(/, got "mmapped"$/);
    expect(() => syscalls.socket("tcp5" as never)).toThrow(/, got "tcp5"$/);
    expect(() => syscalls.shutdown(0, "read" as never)).toThrow(/, got "read"$/);
    expect(() => errnoName("-1" as never)).toThrow(/, got "-1"$/);
  });

  it("a poller's add and poll too", () => {
    const poller = new Poller(() => undefined);
    try {
      expect(() => poller.add(0, 1, "edgy" as never)).toThrow(/, got "edgy"$/);
      expect(() => poller.poll("1" as never)).toThrow(/, got "1"$/);
    } finally {
      poller.destroy();
    }
  });

  it.skipIf(noUring !== "")(`the io_uring backend's options too${noUring}`, () => {
    expect(() => uringBackend({ entries: "8" as never })).toThrow(/, got "8"$/);
  });
});
