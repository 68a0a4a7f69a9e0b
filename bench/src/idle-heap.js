// What one idle connection keeps on a server's JS heap, object by object: the
// idle row of native-echo.js says how many bytes, this says which objects.
//
// Each server (native-echo.js --serve MODE, in a process of its own: the same
// servers as the idle row, before:MODE with BOBBIN_BEFORE=<checkout>) writes a
// heap snapshot, N idle connections come from this process, and it writes
// another. The objects of the two snapshots are counted by type and
// constructor; the table shows, per connection, the objects that grew by at
// least half one per connection or 2 B, each with what references one of the
// new ones. Compiled code and feedback that the connections' first calls made
// show too, as fractions of one per connection that shrink as N grows.
//
//   node bench/src/idle-heap.js [--n=2000] [--modes=libuv-chunk,net,before:libuv-chunk]

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { arg, lines, stopServer } from "./echo-common.js";
import { openMany, serverCommand } from "./native-echo.js";

/**
 * A heap snapshot (V8's JSON) as objects by group ("type:name"): `groups`
 * maps each to its count, bytes and the index of its last object with an id
 * above `newerThan`, or -1; `maxId` is the highest id of V8's own objects
 * (a process gives one the same id in each of its snapshots, and a new one a
 * higher id; Node's native and synthetic nodes are numbered apart); `retainers` names, for an object's index, what references it
 * ("object:Task.value").
 */
export function readSnapshot(json, newerThan = Infinity) {
  const { meta } = json.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const [type, name, id, self, edgeCount] = ["type", "name", "id", "self_size", "edge_count"].map((f) => meta.node_fields.indexOf(f));
  const [edgeType, edgeName, toNode] = ["type", "name_or_index", "to_node"].map((f) => meta.edge_fields.indexOf(f));
  const nodeTypes = meta.node_types[type];
  const edgeTypes = meta.edge_types[edgeType];
  const { nodes, edges, strings } = json;
  const groupOf = (i) => `${nodeTypes[nodes[i * nf + type]]}:${strings[nodes[i * nf + name]].slice(0, 60)}`;
  const groups = new Map();
  let maxId = 0;
  for (let i = 0; i < nodes.length / nf; i++) {
    const key = groupOf(i);
    const g = groups.get(key) ?? { count: 0, bytes: 0, last: -1 };
    g.count++;
    g.bytes += nodes[i * nf + self];
    if (nodes[i * nf + id] > newerThan) g.last = i;
    const t = nodeTypes[nodes[i * nf + type]];
    if (t !== "native" && t !== "synthetic") maxId = Math.max(maxId, nodes[i * nf + id]);
    groups.set(key, g);
  }
  /** What references object `target`: up to `max` "group.edge" names. */
  function retainers(target, max = 3) {
    const out = [];
    for (let i = 0, e = 0; i < nodes.length / nf && out.length < max; i++) {
      const end = e + nodes[i * nf + edgeCount] * ef;
      for (; e < end; e += ef) {
        if (edges[e + toNode] / nf !== target) continue;
        const kind = edgeTypes[edges[e + edgeType]];
        if (kind === "weak" || kind === "shortcut") continue;
        const label = kind === "element" || kind === "hidden" ? `[${edges[e + edgeName]}]` : `.${strings[edges[e + edgeName]]}`;
        out.push(`${groupOf(i)}${label}`);
        if (out.length === max) break;
      }
    }
    return out;
  }
  return { groups, maxId, retainers };
}

/**
 * The groups that grew from `before` to `after` (readSnapshot's) by at least
 * half an object or 2 B per connection, most bytes first: { group, count, bytes }
 * per connection, and `total`: every object's bytes, per connection.
 */
export function heapDiff(before, after, n) {
  const rows = [];
  let total = 0;
  for (const [group, g] of after.groups) {
    const b = before.groups.get(group) ?? { count: 0, bytes: 0 };
    const count = (g.count - b.count) / n;
    const bytes = (g.bytes - b.bytes) / n;
    total += bytes;
    if (Math.abs(count) >= 0.5 || Math.abs(bytes) >= 2) rows.push({ group, count, bytes });
  }
  for (const [group, b] of before.groups) if (!after.groups.has(group)) total -= b.bytes / n;
  rows.sort((x, y) => y.bytes - x.bytes);
  return { rows, total };
}

async function snapshotsOf(mode, n, dir) {
  const [cmd, args, env] = serverCommand(mode, {}, true);
  const server = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"], env });
  const next = lines(server, `${mode} server`);
  let sockets = [];
  const heap = async (file, newerThan) => {
    server.stdin.write(`heap ${file}\n`);
    await next("HEAP", 120_000);
    return readSnapshot(JSON.parse(readFileSync(file, "utf8")), newerThan);
  };
  try {
    const port = Number((await next("PORT")).split(" ")[1]);
    const before = await heap(join(dir, `${mode.replace(":", "-")}-before.heapsnapshot`));
    sockets = await openMany(port, n);
    for (let tries = 0; ; tries++) {
      server.stdin.write("mem\n");
      const count = Number((await next("MEM")).split(" ")[4]);
      if (count >= n) break;
      if (tries === 200) throw new Error(`${mode}: the server accepted ${count} of ${n} connections`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 200)); // every fiber parked
    const after = await heap(join(dir, `${mode.replace(":", "-")}-after.heapsnapshot`), before.maxId);
    return { before, after };
  } finally {
    for (const s of sockets) s.destroy();
    await stopServer(server);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const n = arg("n", 2000);
  const modes = (process.argv.find((a) => a.startsWith("--modes="))?.slice(8) ?? "libuv-chunk,net").split(",");
  const dir = mkdtempSync(join(tmpdir(), "bobbin-heap-"));
  try {
    for (const mode of modes) {
      const { before, after } = await snapshotsOf(mode, n, dir);
      const { rows, total } = heapDiff(before, after, n);
      console.log(`\n${mode}: ${total.toFixed(0)} B of JS heap per idle connection (${n.toLocaleString("en")} connections)\n`);
      console.log("| bytes / conn. | objects / conn. | type:constructor | one of them is referenced by |\n|---:|---:|---|---|");
      for (const r of rows) {
        const last = after.groups.get(r.group).last;
        const who = r.count >= 0.5 && last >= 0 ? after.retainers(last).join(", ") : "";
        console.log(`| ${r.bytes.toFixed(1)} | ${r.count.toFixed(2)} | ${r.group} | ${who} |`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
