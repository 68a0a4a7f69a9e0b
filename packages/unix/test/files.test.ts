/** Files as operations: readFile, writeFile, appendFile, open → read/write/sync/close; cancelled with their task. */

import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as B from "@bobbin/core";
import { failure, openFds, thrownBy, until } from "@bobbin/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { activeHandles, leaked } from "../src/conformance/support.js";
import { appendFile, open, readFile, run, sleep, writeFile } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "bobbin-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("readFile, writeFile, appendFile", () => {
  it("write, append and read a file back", async () => {
    const path = join(dir, "a.txt");
    const text = await run(function* () {
      yield* writeFile(path, "hello ");
      yield* appendFile(path, Buffer.from("world"));
      yield* appendFile(path, "\n");
      return (yield* readFile(path)).toString("utf8");
    });
    expect(text).toBe("hello world\n");
  });

  it("writeFile empties the file first; appendFile creates a missing one", async () => {
    const path = join(dir, "b.txt");
    const created = join(dir, "created.txt");
    const [b, c] = await run(function* () {
      yield* writeFile(path, "a long first content");
      yield* writeFile(path, "short");
      yield* appendFile(created, "new");
      return [(yield* readFile(path)).toString(), (yield* readFile(created)).toString()];
    });
    expect([b, c]).toEqual(["short", "new"]);
  });

  it("throws the system's error to the task: ENOENT, EISDIR", async () => {
    const [missing, isDir] = await run(function* () {
      return [yield* failure(() => readFile(join(dir, "missing"))), yield* failure(() => readFile(dir))];
    });
    expect(missing.code).toBe("ENOENT");
    expect(isDir.code).toBe("EISDIR");
  });

  it("checks its arguments before doing anything", () => {
    expect(thrownBy(() => readFile("" as never))).toBeInstanceOf(TypeError);
    expect(String(thrownBy(() => readFile(42 as never)))).toMatch(/readFile\(path\) expects a path .*got number 42/);
    expect(String(thrownBy(() => readFile("a\0b")))).toMatch(/NUL/);
    expect(String(thrownBy(() => writeFile(join(dir, "x"), 42 as never)))).toMatch(
      /writeFile\(path, data\) expects data as a string or a Buffer/,
    );
    expect(thrownBy(() => appendFile(join(dir, "x"), { length: 1 } as never))).toBeInstanceOf(TypeError);
  });

  it("reads a FIFO as a stream: waits for its writer, returns what it wrote once it closed", async () => {
    const fifo = join(dir, "fifo-written");
    execFileSync("mkfifo", [fifo]);
    const got = await run(function* () {
      const reader = B.spawn(function* () {
        return yield* readFile(fifo);
      });
      yield* sleep(0.05); // the reader waits for a writer: none yet
      expect(reader.status).toBe("pending");
      const writer = spawn("sh", ["-c", `printf 'through the fifo' > '${fifo}'`]);
      const exited = once(writer, "exit");
      try {
        return (yield* B.awaitExn(reader)).toString();
      } finally {
        yield* B.promise(() => exited);
      }
    });
    expect(got).toBe("through the fifo");
  });

  it("a cancelled readFile of a FIFO nobody writes ends promptly and leaks no fd", async () => {
    const fifo = join(dir, "fifo-idle");
    execFileSync("mkfifo", [fifo]);
    const before = openFds();
    const handles = activeHandles();
    const took = await run(function* () {
      const reader = B.spawn(function* () {
        return yield* readFile(fifo);
      });
      yield* sleep(0.05);
      expect(reader.status).toBe("pending");
      const start = performance.now();
      yield* B.cancel(reader);
      expect(reader.status).toBe("cancelled");
      return performance.now() - start;
    });
    // Without a writer the open never finishes: any bound shows that cancel does not wait for it (100 ms was
    // crossed by 0.4 ms on a loaded machine, where the cancel's own steps waited for a core).
    expect(took).toBeLessThan(1000);
    // The stream closes its descriptor as it goes (the close finishes on Node's loop).
    if (before !== null) await until(() => openFds() === before);
    await until(() => Object.keys(leaked(handles, activeHandles())).length === 0);
  });
});

describe("open: a file handle", () => {
  it("writes, syncs, reads back from the start, and closes", async () => {
    const path = join(dir, "handle.bin");
    const [n, text, flags] = await run(function* () {
      const f = yield* open(path, "w+");
      try {
        yield* f.write("0123456789", 2, 5); // "23456"
        yield* f.write(Buffer.from("!"));
        yield* f.sync();
      } finally {
        yield* f.close();
      }
      const g = yield* open(path);
      try {
        const buf = Buffer.alloc(32);
        const got = yield* g.read(buf);
        return [got, buf.toString("utf8", 0, got), g.flags];
      } finally {
        yield* g.close();
      }
    });
    expect([n, text, flags]).toEqual([6, "23456!", "r"]);
  });

  it("appends with 'a', reads sequentially, 0 at the end", async () => {
    const path = join(dir, "log.txt");
    const reads = await run(function* () {
      yield* writeFile(path, "one\n");
      const a = yield* open(path, "a");
      yield* a.write("two\n");
      yield* a.close();
      const r = yield* open(path, "r");
      const buf = Buffer.alloc(4);
      const got: string[] = [];
      for (let k: number; (k = yield* r.read(buf)) > 0; ) got.push(buf.toString("utf8", 0, k));
      yield* r.close();
      return got;
    });
    expect(reads).toEqual(["one\n", "two\n"]);
  });

  it("fails with the system's error; refuses bad flags and bounds", async () => {
    const [missing, readOnly] = await run(function* () {
      const m = yield* failure(() => open(join(dir, "nope"), "r+"));
      writeFileSync(join(dir, "ro.txt"), "x");
      const f = yield* open(join(dir, "ro.txt"), "r");
      try {
        return [m, yield* failure(() => f.write("y"))];
      } finally {
        yield* f.close();
      }
    });
    expect(missing.code).toBe("ENOENT");
    expect(readOnly.code).toBe("EBADF");
    expect(String(thrownBy(() => open(join(dir, "x"), "rw" as never)))).toMatch(
      /flags must be one of "r", "r\+", "w", "w\+", "a", "a\+", got "rw"/,
    );
    const handleErrors = await run(function* () {
      const f = yield* open(join(dir, "ro.txt"));
      try {
        return [thrownBy(() => f.read(Buffer.alloc(4), 5)), thrownBy(() => f.write("abc", 0, 9))];
      } finally {
        yield* f.close();
      }
    });
    expect(handleErrors[0]).toBeInstanceOf(RangeError);
    expect(handleErrors[1]).toBeInstanceOf(RangeError);
  });

  it("a cancelled open closes the file it opened meanwhile", async () => {
    const path = join(dir, "opened.txt");
    writeFileSync(path, "x");
    const before = openFds();
    await run(function* () {
      const opener = B.spawn(function* () {
        return yield* open(path, "r");
      });
      yield* B.cancel(opener); // queued, never ran
      const racing = B.spawn(function* () {
        return yield* open(path, "r");
      });
      yield* B.yieldNow(); // the open is in progress
      yield* B.cancel(racing);
    });
    if (before !== null) await until(() => openFds() === before);
  });
});
