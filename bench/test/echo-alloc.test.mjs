// echo-alloc.js counts a server's garbage from V8's --trace-gc lines: each collection's heap in use
// before minus after. A line it misreads (another collector's name, the heap's reserved size in
// parentheses) would change the count without failing anything else.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { freedBy } from "../src/echo-alloc.js";

describe("echo-alloc's count", () => {
  it("adds what each collection freed, in bytes, and nothing else", () => {
    const lines = [
      "[123:0x5f]      812 ms: Scavenge 6.2 (8.0) -> 5.2 (9.0) MB, 0.71 / 0.00 ms  (average mu = 1.000) allocation failure;",
      "[123:0x5f]      901 ms: Mark-Compact (reduce) 7.5 (9.0) -> 5.0 (9.0) MB, 0.40 / 0.00 ms  (average mu = 0.99) low memory notification;",
      "[123:0x5f]     1203 ms: Mark-Compact 9.0 (12.0) -> 4.5 (10.0) MB, 3.10 / 0.00 ms  (average mu = 0.99) finalize;",
      "PORT 4242",
      "CPU 100 200",
    ];
    assert.equal(freedBy(lines), (1.0 + 2.5 + 4.5) * 2 ** 20);
  });
});
