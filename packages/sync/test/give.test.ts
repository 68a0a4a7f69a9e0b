/**
 * `spawn({ give })` is checked by core, whatever this package did: a value
 * that nothing would move is refused before `Ownership` was ever used in the
 * process (this file uses it only afterwards), as after; `Ownership`'s spawn
 * hook adds only its own rule (the spawner owns the resource) and leaves
 * other packages' values to them.
 */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { describe, expect, it } from "vitest";
import { NotOwner, Ownership } from "../src/index.js";

const RULE =
  /^spawn\(\{ give \}\) takes resources to move to the child \(made by @bobbin\/sync's Ownership\.create, or marked with givable of @bobbin\/core\/lowlevel\), got an object at index 0/;

describe("spawn({ give })", () => {
  it("refuses a plain object before Ownership was ever used in the process", async () => {
    await B.run(function* () {
      expect(() => B.spawn({ give: [{}] }, function* () {})).toThrow(TypeError);
      expect(() => B.spawn({ give: [{}] }, function* () {})).toThrow(RULE);
    });
  });

  it("refuses it the same once Ownership is in use, and a resource the spawner does not own is NotOwner", async () => {
    await B.run(function* () {
      const r = Ownership.create(1, () => undefined);
      expect(() => B.spawn({ give: [{}] }, function* () {})).toThrow(RULE);
      expect(() => B.spawn({ give: [r] }, function* () {})).toThrow(NotOwner);
    });
  });

  it("leaves another package's givable values to it, and moves its own", async () => {
    const lease = { [L.givable]: true as const };
    const owner = await B.run(function* () {
      const r = Ownership.create("fd", () => undefined);
      Ownership.own(r);
      const child = B.spawn({ give: [lease, r] }, function* () {
        const mine = r.owner === B.self();
        Ownership.release(r);
        return mine;
      });
      return yield* B.awaitExn(child);
    });
    expect(owner).toBe(true);
  });
});
