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

describe("a crash", () => {
  /** Writes `synced`, syncs, writes `unsynced`, crashes and restarts; the next life reads the file back. */
  async function afterCrash(seed: number): Promise<{ content: string | null; trace: string }> {
    const sim = new Sim({ seed, trace: true });
    let content: string | null = null;
    let lives = 0;
    sim.host("db", function* () {
      if (++lives === 2) {
        content = text(yield* disk.readFile("f"));
        return;
      }
      const f = yield* disk.open("f", "a");
      yield* f.write("synced.");
      yield* f.sync();
      yield* f.write("unsynced");
      yield* sleep(1);
    });
    const disk = sim.disk("db");
    sim.client("chaos", function* () {
      yield* sleep(0.5);
      sim.restart("db");
      yield* sleep(0.5);
    });
    await sim.run();
    return { content, trace: String(sim.trace()) };
  }

  it("keeps what was synced, and of what was not, all, none or a torn prefix, as the seed chooses", async () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) {
      const { content, trace } = await afterCrash(seed);
      expect(content!.startsWith("synced.")).toBe(true);
      expect("synced.unsynced".startsWith(content!)).toBe(true);
      seen.add(content === "synced." ? "lost" : content === "synced.unsynced" ? "kept" : "torn");
      if (content !== "synced.unsynced") expect(trace).toMatch(/ db disk f: a crash lost \d+ of 8 unsynced units\n/);
      expect(await afterCrash(seed)).toEqual({ content, trace }); // the seed decides
    }
    expect(seen).toEqual(new Set(["lost", "kept", "torn"]));
  });

  it("may lose a file whose creation was never synced; its handles die with the host", async () => {
    const outcomes = new Set<string>();
    for (let seed = 1; seed <= 30; seed++) {
      const sim = new Sim({ seed });
      let seen = "";
      let handle: FileHandle | null = null;
      sim.host("db", function* () {
        if (handle !== null) {
          try {
            yield* handle.write("late");
          } catch (error) {
            seen = (error as NodeJS.ErrnoException).code!;
          }
          try {
            seen += ` kept "${text(yield* disk.readFile("new"))}"`;
          } catch (error) {
            seen += ` ${(error as NodeJS.ErrnoException).code}`;
          }
          return;
        }
        handle = yield* disk.open("new", "w");
        yield* handle.write("data");
        yield* sleep(1);
      });
      const disk = sim.disk("db");
      sim.client("chaos", function* () {
        yield* sleep(0.5);
        sim.restart("db");
        yield* sleep(0.5);
      });
      await sim.run();
      outcomes.add(seen);
    }
    for (const o of outcomes) expect(o).toMatch(/^EBADF (ENOENT|kept "(|d|da|dat|data)")$/);
    expect(outcomes.has("EBADF ENOENT")).toBe(true); // its creation lost
    expect(outcomes.has('EBADF kept "data"')).toBe(true);
    expect(outcomes.size).toBeGreaterThan(2); // and torn
  });

  it("keeps what a finished sync made durable, and nothing of a sync the crash cut short", async () => {
    const lostWith = async (crashAt: number): Promise<number> => {
      let lost = 0;
      for (let seed = 1; seed <= 20; seed++) {
        const sim = new Sim({ seed });
        let lives = 0;
        let content = "";
        sim.host("db", function* () {
          if (++lives === 2) {
            try {
              content = text(yield* disk.readFile("f"));
            } catch {
              content = "gone"; // its creation was not synced either
            }
            return;
          }
          const f = yield* disk.open("f", "w");
          yield* f.write("abc");
          yield* f.sync(); // 1 to 5 ms
          yield* sleep(1);
        });
        const disk = sim.disk("db");
        sim.client("chaos", function* () {
          yield* sleep(crashAt);
          sim.restart("db");
          yield* sleep(0.5);
        });
        await sim.run();
        if (content !== "abc") lost++;
      }
      return lost;
    };
    expect(await lostWith(0.0005)).toBeGreaterThan(0);
    expect(await lostWith(0.01)).toBe(0);
  });
});
