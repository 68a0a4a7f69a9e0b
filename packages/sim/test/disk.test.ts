import * as B from "@bobbin/core";
import { sleep } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { type Disk, type FileHandle, Sim } from "../src/index.js";

/** Runs `body` as the main of host `db` (its disk given), in a world of `seed`; returns its result. */
async function onDisk<T>(seed: number, body: (disk: Disk, sim: Sim) => Generator<B.Instruction, T, unknown>): Promise<T> {
  const sim = new Sim({ seed, trace: true });
  let disk: Disk | null = null;
  sim.client("db", () => body(disk!, sim));
  disk = sim.disk("db");
  const [result] = await sim.run();
  return result as T;
}

const text = (bytes: Buffer): string => bytes.toString();

describe("a host's disk", () => {
  it("reads what was written; appends; open flags read, write, truncate and append", async () => {
    const seen = await onDisk(1, function* (disk) {
      yield* disk.writeFile("a", "hello");
      yield* disk.appendFile("a", " world");
      const first = text(yield* disk.readFile("a"));
      const f = yield* disk.open("a", "r+");
      yield* f.write("J");
      const buf = Buffer.alloc(4);
      const n = yield* f.read(buf);
      yield* f.close();
      const w = yield* disk.open("a", "w");
      yield* w.write(Buffer.from("xyz"), 1);
      const a = yield* disk.open("a", "a+");
      const back = Buffer.alloc(16);
      const m = yield* a.read(back); // from the start; writes go to the end
      yield* a.write("!");
      return [first, buf.toString("utf8", 0, n), back.toString("utf8", 0, m), text(yield* disk.readFile("a"))];
    });
    expect(seen).toEqual(["hello world", "ello", "yz", "yz!"]);
  });

  it("refuses what a file system refuses: a missing file, a closed handle, the wrong mode, another host", async () => {
    const codes = await onDisk(1, function* (disk, sim) {
      const caught: string[] = [];
      const attempt = function* (op: () => Generator<B.Instruction, unknown, unknown>) {
        try {
          yield* op();
          caught.push("ok");
        } catch (error) {
          caught.push((error as NodeJS.ErrnoException).code ?? (error as Error).name);
        }
      };
      yield* attempt(() => disk.readFile("nope"));
      yield* attempt(() => disk.open("nope", "r+"));
      const r = yield* disk.open("f", "w");
      yield* r.close();
      yield* attempt(() => r.write("x"));
      const ro = yield* disk.open("f", "r");
      yield* attempt(() => ro.write("x"));
      const wo = yield* disk.open("f", "a");
      yield* attempt(() => wo.read(Buffer.alloc(1)));
      yield* attempt(() => disk.open("f", "rw" as never));
      yield* attempt(() => disk.writeFile("f", 42 as never));
      yield* attempt(() => wo.read(Buffer.alloc(1), 2, 1));
      expect(() => sim.disk("db", {})).toThrow(/made already/);
      return caught;
    });
    expect(codes).toEqual(["ENOENT", "ENOENT", "EBADF", "EBADF", "EBADF", "TypeError", "TypeError", "EBADF"]);
    const sim = new Sim({ seed: 1 });
    sim.host("db", function* () {});
    const disk = sim.disk("db");
    sim.client("thief", function* () {
      return yield* disk.readFile("x");
    });
    await expect(sim.run()).rejects.toThrow(/this is the disk of db; a task of thief cannot use it/);
    expect(() => sim.disk("nobody")).toThrow(/no host is named "nobody"/);
  });

  it("a sync takes the disk's latency, and each operation is a step of its own", async () => {
    const [took, order] = await onDisk(1, function* (disk) {
      const f = yield* disk.open("f", "w");
      yield* f.write("x");
      const start = Date.now();
      yield* f.sync();
      const took = Date.now() - start;
      const order: string[] = [];
      const other = B.spawn(function* () {
        order.push("other");
      });
      yield* disk.writeFile("g", "y");
      order.push("after write");
      yield* B.awaitExn(other);
      return [took, order] as const;
    });
    expect(took).toBeGreaterThanOrEqual(1);
    expect(took).toBeLessThanOrEqual(5);
    expect(order).toEqual(["other", "after write"]);
  });
});

type Life = (disk: Disk) => Generator<B.Instruction, unknown, unknown>;

/**
 * A world of `seed` whose host `db` lives `first`, is crashed and restarted
 * at `at` seconds, then lives `second`: returns what `second` returned, and
 * the trace.
 */
async function crashBetween(seed: number, at: number, first: Life, second: Life): Promise<{ seen: string; trace: string }> {
  const sim = new Sim({ seed, trace: true });
  let lives = 0;
  let seen = "";
  sim.host("db", function* () {
    if (++lives === 1) {
      yield* first(disk);
      yield* sleep(1);
    } else seen = String(yield* second(disk));
  });
  const disk = sim.disk("db");
  sim.client("chaos", function* () {
    yield* sleep(at);
    sim.restart("db");
    yield* sleep(0.5);
  });
  await sim.run();
  return { seen, trace: String(sim.trace()) };
}

/** The file's content, or its error's code. */
function* contentOf(disk: Disk, path: string): Generator<B.Instruction, string, unknown> {
  try {
    return text(yield* disk.readFile(path));
  } catch (error) {
    return (error as NodeJS.ErrnoException).code!;
  }
}

describe("a crash", () => {
  it("keeps what was synced, and of what was not, all, none or a torn prefix, as the seed chooses", async () => {
    const writes: Life = function* (disk) {
      const f = yield* disk.open("f", "a");
      yield* f.write("synced.");
      yield* f.sync();
      yield* f.write("unsynced");
    };
    const reads: Life = (disk) => contentOf(disk, "f");
    const kinds = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) {
      const { seen, trace } = await crashBetween(seed, 0.5, writes, reads);
      expect(seen.startsWith("synced.")).toBe(true);
      expect("synced.unsynced".startsWith(seen)).toBe(true);
      kinds.add(seen === "synced." ? "lost" : seen === "synced.unsynced" ? "kept" : "torn");
      if (seen !== "synced.unsynced") expect(trace).toMatch(/ db disk f: a crash lost \d+ of 8 unsynced units\n/);
      expect(await crashBetween(seed, 0.5, writes, reads)).toEqual({ seen, trace }); // the seed decides
    }
    expect(kinds).toEqual(new Set(["lost", "kept", "torn"]));
  });

  it("may lose a file whose creation was never synced; its handles die with the host", async () => {
    let handle: FileHandle | null = null;
    const writes: Life = function* (disk) {
      handle = yield* disk.open("new", "w");
      yield* handle.write("data");
    };
    const reads: Life = function* (disk) {
      let seen = "";
      try {
        yield* handle!.write("late");
      } catch (error) {
        seen = (error as NodeJS.ErrnoException).code!;
      }
      return `${seen} ${yield* contentOf(disk, "new")}`;
    };
    const outcomes = new Set<string>();
    for (let seed = 1; seed <= 30; seed++) outcomes.add((await crashBetween(seed, 0.5, writes, reads)).seen);
    for (const o of outcomes) expect(o).toMatch(/^EBADF (ENOENT|d|da|dat|data)?$/);
    expect(outcomes.has("EBADF ENOENT")).toBe(true); // its creation lost
    expect(outcomes.has("EBADF data")).toBe(true);
    expect(outcomes.size).toBeGreaterThan(2); // and torn
  });

  it("keeps what a finished sync made durable, and nothing of a sync the crash cut short", async () => {
    const writes: Life = function* (disk) {
      const f = yield* disk.open("f", "w");
      yield* f.write("abc");
      yield* f.sync(); // 1 to 5 ms
    };
    const lostWith = async (at: number): Promise<number> => {
      let lost = 0;
      for (let seed = 1; seed <= 20; seed++)
        if ((await crashBetween(seed, at, writes, (disk) => contentOf(disk, "f"))).seen !== "abc") lost++;
      return lost;
    };
    expect(await lostWith(0.0005)).toBeGreaterThan(0);
    expect(await lostWith(0.01)).toBe(0);
  });
});
