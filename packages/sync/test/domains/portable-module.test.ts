/**
 * The sync README's shared-Mutex example as `tsc` compiles it: the parallel
 * task's module imports `Mutex` for its type only, so the worker never
 * imports @bobbin/sync itself; the shared primitives carry their module's URL
 * and the worker loads it by itself.
 */
import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { Mutex } from "../../dist/index.js";
import { sharedCells } from "../helpers.js";
import * as F from "./fixtures/type-only.mjs";

describe("a shared Mutex given to a task module that imports @bobbin/sync for its types only", () => {
  it("still protects the count: every call runs, the total is exact", async () => {
    const m = Mutex.shared();
    const cells = sharedCells(1);
    const k = 100;
    const results = await B.run(
      function* () {
        return yield* B.awaitAll([1, 2, 1].map((pin) => B.call({ pin }, F.incrementUntyped, { m, cells, k })));
      },
      { domains: 2 },
    );
    expect(results.map((r) => (r.ok ? "ok" : String(r.error)))).toEqual(["ok", "ok", "ok"]);
    expect(cells[0]).toBe(3 * k);
  });
});
