// idle-heap.js diffs two heap snapshots of a server by constructor, per connection, and names what
// references one of the new objects of each group (not one that was there before the connections).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { heapDiff, readSnapshot } from "../src/idle-heap.js";

/** A snapshot in V8's layout: `objects` are [type, name, id, bytes, [[edge name, index of the target]…]]. */
function snapshot(objects) {
  const strings = [];
  const str = (s) => (strings.includes(s) ? strings.indexOf(s) : strings.push(s) - 1);
  const nodes = [];
  const edges = [];
  const types = ["object", "synthetic", "native"];
  for (const [type, name, id, bytes, refs = []] of objects) {
    nodes.push(types.indexOf(type), str(name), id, bytes, refs.length);
    for (const [edge, to] of refs) edges.push(0, str(edge), to * 5);
  }
  return {
    snapshot: {
      meta: {
        node_fields: ["type", "name", "id", "self_size", "edge_count"],
        node_types: [types],
        edge_fields: ["type", "name_or_index", "to_node"],
        edge_types: [["property"]],
      },
    },
    nodes,
    edges,
    strings,
  };
}

describe("idle-heap", () => {
  it("counts per connection the groups that grew by half an object or 2 B (not a group that grew by 0.5 B), most bytes first, and who references a new one", () => {
    const before = readSnapshot(
      snapshot([
        ["synthetic", "(GC roots)", 1, 0, [["old", 1]]],
        ["object", "Task", 3, 72],
        ["native", "Handle", 9_000_000, 8],
        ["object", "Map", 5_001, 40],
      ]),
    );
    assert.equal(before.maxId, 5_001, "native and synthetic ids are numbered apart");
    const after = readSnapshot(
      snapshot([
        [
          "synthetic",
          "(GC roots)",
          1,
          0,
          [
            ["old", 1],
            ["a", 2],
            ["b", 3],
          ],
        ],
        ["object", "Task", 3, 72, [["value", 4]]],
        ["object", "Task", 5_003, 72, [["value", 5]]],
        ["object", "Task", 5_005, 72, [["value", 6]]],
        ["object", "Sock", 5_007, 120],
        ["object", "Sock", 5_009, 120],
        ["object", "Sock", 5_011, 120],
        ["object", "Map", 5_001, 41],
      ]),
      before.maxId,
    );
    const { rows, total } = heapDiff(before, after, 2);
    assert.deepEqual(rows, [
      { group: "object:Sock", count: 1.5, bytes: 180 },
      { group: "object:Task", count: 1, bytes: 72 },
    ]);
    assert.equal(total, 180 + 72 + 0.5 - 4, "every object's bytes, those of the objects that went too");
    assert.deepEqual(after.retainers(after.groups.get("object:Task").last), ["synthetic:(GC roots).b"], "a new task, not the old one");
    assert.deepEqual(after.retainers(after.groups.get("object:Sock").last), ["object:Task.value"]);
  });
});
