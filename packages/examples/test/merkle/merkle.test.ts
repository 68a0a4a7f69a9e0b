import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { compare, parallelRoot, sequentialRoot } from "../../src/merkle/hash.js";
import { combine, hashLeaf, hashNode, leafData, rootOf, split } from "../../src/merkle/tree.js";
import { runProgram } from "../support/processes.js";

describe("the Merkle tree", () => {
  it("is the hash of the hashes, pairwise, with leaf and node prefixes", () => {
    const leaves = [0, 1, 2, 3].map((i) => hashLeaf(leafData(i, 16)));
    const expected = hashNode(hashNode(leaves[0]!, leaves[1]!), hashNode(leaves[2]!, leaves[3]!));
    expect(rootOf({ from: 0, count: 4, leafSize: 16 }).equals(expected)).toBe(true);
    expect(combine(leaves).equals(expected)).toBe(true);
    expect(hashLeaf(Buffer.alloc(0)).equals(hashNode(Buffer.alloc(0), Buffer.alloc(0)))).toBe(false);
  });

  it("leaves are reproducible and differ", () => {
    expect(leafData(5, 32).equals(leafData(5, 32))).toBe(true);
    expect(leafData(5, 32).equals(leafData(6, 32))).toBe(false);
  });

  it("refuses sizes that are not powers of two", () => {
    expect(() => split(12, 4, 8)).toThrow(RangeError);
    expect(() => split(16, 32, 8)).toThrow(RangeError);
    expect(() => combine([Buffer.alloc(32), Buffer.alloc(32), Buffer.alloc(32)])).toThrow(RangeError);
  });

  it("the root of the subtrees' roots is the root, however it is split", () => {
    const whole = sequentialRoot(64, 32);
    for (const parts of [1, 2, 4, 8, 64]) {
      const roots = split(64, parts, 32).map(rootOf);
      expect(combine(roots).equals(whole)).toBe(true);
    }
  });

  it("parallel over worker domains gives the same root as dom0 alone", async () => {
    const root = await B.run(
      function* () {
        return yield* parallelRoot(1024, 64, 8);
      },
      { domains: 2 },
    );
    expect(root.equals(sequentialRoot(1024, 64))).toBe(true);
  });

  it("compare() times both ways", async () => {
    const c = await compare({ leaves: 2048, leafSize: 128, domains: 2 });
    expect(c.sameRoot).toBe(true);
    expect(c.parts).toBe(8);
    expect(c.sequentialMs).toBeGreaterThan(0);
    expect(c.parallelMs).toBeGreaterThan(0);
  });

  it("node dist/merkle.js --leaves 4096 --leaf-size 256 --domains 2", async () => {
    const r = await runProgram("merkle.js", ["--leaves", "4096", "--leaf-size", "256", "--domains", "2"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/root [0-9a-f]{64} \(the same both ways\)/);
    expect(r.stdout).toMatch(/speed-up ×[\d.]+ on \d+ core/);
  });
});
