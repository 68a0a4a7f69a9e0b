/**
 * Descriptors and processes: `pipe()`, `ofFd(fd)`, `spawnProcess`, and a
 * cancelled `readFile` of a FIFO, alike on every backend that has
 * descriptors; a backend without them (its `services.descriptors` says why)
 * refuses each with `Unsupported`.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { type Backend, type ChildProcess, close, ofFd, pipe, read, readFile, sleep, spawnProcess, Unsupported, write } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";
import { backToFds, failure, openFds, pattern, settledFds, thrown } from "./support.js";

/** Whether the running backend has descriptors (else: the reason it gives). */
function refusal(): string | undefined {
  return (L.currentEvents() as Backend).services?.descriptors;
}

/** Whether process `pid` is gone: reaped, not a zombie (`kill(pid, 0)` finds no process). */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** Waits (real time, bounded) until `check` holds. */
function* eventually(check: () => boolean, what: string): Generator<B.Instruction, void, unknown> {
  for (let i = 0; i < 200 && !check(); i++) yield* B.promise(() => new Promise((resolve) => setTimeout(resolve, 10)));
  expect(check(), what).toBe(true);
}

/** @internal */
export function descriptorTests(suite: Suite): void {
  describe("descriptors and processes", () => {
    it("a backend without descriptors refuses pipe, ofFd and spawnProcess with Unsupported, naming why", async () => {
      const errors = await suite.leakFree(function* () {
        if (refusal() === undefined) return null;
        return [yield* failure(() => pipe()), thrown(() => ofFd(0)), yield* failure(() => spawnProcess("true"))];
      });
      if (errors === null) return; // this backend has descriptors: the tests below check them
      for (const e of errors) {
        expect(e).toBeInstanceOf(Unsupported);
        expect((e as NodeJS.ErrnoException).code).toBe("ENOTSUP");
      }
    });

    it("pipe(): the write end's bytes come out of the read end, in order; once the writer closed, read gives 0 (Miou's test01, eof on pipe)", async () => {
      const fds = await settledFds();
      const got = await suite.leakFree(function* () {
        if (refusal() !== undefined) return null;
        const [r, w] = yield* pipe();
        const data = pattern(7, 100_000);
        const writer = B.spawn(function* () {
          yield* write(w, data);
          yield* close(w);
        });
        const chunks: Buffer[] = [];
        const buf = Buffer.alloc(8192);
        for (let n: number; (n = yield* read(r, buf)) > 0; ) chunks.push(Buffer.from(buf.subarray(0, n)));
        yield* B.awaitExn(writer);
        const after = yield* read(r, buf);
        yield* close(r);
        return [Buffer.concat(chunks).equals(data), after];
      });
      if (got !== null) expect(got).toEqual([true, 0]);
      expect(await backToFds(fds), "no descriptor left").toBe(true);
    });

    it("pipe(): a read parked on the read end wakes with 0 when the writer closes; a cancelled one leaves nothing", async () => {
      await suite.leakFree(function* () {
        if (refusal() !== undefined) return;
        const [r, w] = yield* pipe();
        const buf = Buffer.alloc(16);
        const cancelled = B.spawn(function* () {
          return yield* read(r, buf);
        });
        yield* sleep(0.01);
        yield* B.cancel(cancelled);
        expect(cancelled.status).toBe("cancelled");
        const reader = B.spawn(function* () {
          return yield* read(r, buf);
        });
        yield* sleep(0.01);
        expect(reader.status).toBe("pending");
        yield* close(w);
        expect(yield* B.awaitExn(reader)).toBe(0);
        yield* close(r);
      });
    });

    it("ofFd(fd): a FIFO's two ends as sockets: bytes, then 0 once the writer closed", async () => {
      const fifo = join(suite.dir(), "fifo");
      execFileSync("mkfifo", [fifo]);
      const fds = await settledFds();
      const got = await suite.leakFree(function* () {
        if (refusal() !== undefined) return null;
        // The read end first, without waiting for a writer; then the write end finds it.
        const r = ofFd(openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK));
        const w = ofFd(openSync(fifo, constants.O_WRONLY));
        yield* write(w, "through a fifo");
        yield* close(w);
        const buf = Buffer.alloc(64);
        let text = "";
        for (let n: number; (n = yield* read(r, buf)) > 0; ) text += buf.toString("utf8", 0, n);
        yield* close(r);
        return text;
      });
      if (got !== null) expect(got).toBe("through a fifo");
      expect(await backToFds(fds), "the sockets closed their descriptors").toBe(true);
    });

    it("ofFd(fd) refuses what is not an open stream: TypeError for a non-descriptor or a regular file, EBADF for a closed one", async () => {
      const file = join(suite.dir(), "regular");
      writeFileSync(file, "x");
      const fd = openSync(file, "r");
      try {
        const errors = await suite.inRun(function* () {
          if (refusal() !== undefined) return null;
          const closed = openSync(file, "r");
          closeSync(closed);
          return [thrown(() => ofFd(-1)), thrown(() => ofFd(1.5)), thrown(() => ofFd(fd)), thrown(() => ofFd(closed))];
        });
        if (errors === null) return;
        const [negative, fraction, regular, closed] = errors as NodeJS.ErrnoException[];
        expect(negative).toBeInstanceOf(TypeError);
        expect(fraction).toBeInstanceOf(TypeError);
        expect(String(regular)).toMatch(/is a regular file, not a stream .*open\(\)/);
        expect(closed!.code).toBe("EBADF");
      } finally {
        closeSync(fd);
      }
    });

    it("a cancelled readFile of a FIFO nobody writes returns control at once and leaves no descriptor", async () => {
      const fifo = join(suite.dir(), "idle-fifo");
      execFileSync("mkfifo", [fifo]);
      const took = await suite.inRun(function* () {
        if (refusal() !== undefined) return 0;
        const fds = openFds(); // in the run: the backend's own descriptors are open
        const reader = B.spawn(function* () {
          return yield* readFile(fifo);
        });
        yield* B.promise(() => new Promise((resolve) => setTimeout(resolve, 50)));
        expect(reader.status).toBe("pending");
        const start = performance.now();
        yield* B.cancel(reader);
        expect(reader.status).toBe("cancelled");
        const took = performance.now() - start;
        yield* eventually(() => fds === null || openFds() === fds, "the FIFO's descriptor is closed");
        return took;
      });
      // Without a writer the open never finishes: any bound shows that cancel does not wait for it (100 ms was
      // crossed on a loaded machine, where the cancel's own steps waited for a core).
      expect(took).toBeLessThan(1000);
    });

    it("spawnProcess: stdin, stdout and stderr as sockets; wait gives the exit code; nothing left after", async () => {
      const fds = await settledFds();
      const got = await suite.leakFree(function* () {
        if (refusal() !== undefined) return null;
        const child = yield* spawnProcess(process.execPath, [
          "-e",
          "process.stdin.pipe(process.stdout); process.stdin.on('end', () => { process.stderr.write('done'); process.exitCode = 3; })",
        ]);
        const data = pattern(3, 200_000);
        const writer = B.spawn(function* () {
          yield* write(child.stdin!, data);
          yield* close(child.stdin!);
        });
        const chunks: Buffer[] = [];
        const buf = Buffer.alloc(16384);
        for (let n: number; (n = yield* read(child.stdout!, buf)) > 0; ) chunks.push(Buffer.from(buf.subarray(0, n)));
        yield* B.awaitExn(writer);
        const n = yield* read(child.stderr!, buf);
        const err = buf.toString("utf8", 0, n);
        const exit = yield* child.wait();
        const again = yield* child.wait();
        yield* close(child.stdout!);
        yield* close(child.stderr!);
        return [Buffer.concat(chunks).equals(data), err, exit, again === exit || JSON.stringify(again) === JSON.stringify(exit)];
      });
      if (got !== null) expect(got).toEqual([true, "done", { code: 3, signal: null }, true]);
      expect(await backToFds(fds), "no descriptor left").toBe(true);
    });

    it("spawnProcess: cancelling the owner kills the process (SIGTERM), reaps it and closes its stdio; the run settles after", async () => {
      const fds = await settledFds();
      const pid = await suite.leakFree(function* () {
        if (refusal() !== undefined) return null;
        let pid = -1;
        const owner = B.spawn(function* () {
          const child = yield* spawnProcess("sleep", ["30"], { stdin: "ignore" });
          pid = child.pid;
          yield* child.wait();
        });
        yield* sleep(0.05);
        expect(pid).toBeGreaterThan(0);
        expect(gone(pid)).toBe(false);
        yield* B.cancel(owner);
        yield* eventually(() => gone(pid), "the process is gone while the run goes on (reaped: no zombie)");
        return pid;
      });
      if (pid === null) return;
      expect(await backToFds(fds), "its stdio are closed").toBe(true);
    });

    it("spawnProcess: an owner that returns without waiting leaves a process that ignores SIGTERM to SIGKILL after the grace", async () => {
      const got = await suite.leakFree(function* () {
        if (refusal() !== undefined) return null;
        let child: ChildProcess | null = null;
        const owner = B.spawn(function* () {
          child = yield* spawnedIgnoringTerm();
        });
        yield* B.awaitExn(owner);
        const c = child as ChildProcess | null as ChildProcess;
        const start = performance.now();
        const exit = yield* c.wait();
        return [exit, performance.now() - start, c.pid];
      });
      if (got === null) return;
      const [exit, waited, pid] = got as [unknown, number, number];
      expect(exit).toEqual({ code: null, signal: "SIGKILL" });
      expect(waited, "SIGKILL came after the grace (0.2 s)").toBeGreaterThanOrEqual(150);
      expect(gone(pid)).toBe(true);
    });

    it("spawnProcess: a command that does not exist fails the task with ENOENT and leaves nothing", async () => {
      const fds = await settledFds();
      const error = await suite.leakFree(function* () {
        if (refusal() !== undefined) return null;
        return yield* failure(() => spawnProcess("/nonexistent/bobbin-command"));
      });
      if (error !== null) expect(error.code).toBe("ENOENT");
      expect(await backToFds(fds), "no descriptor left").toBe(true);
    });
  });
}

/** A process that says it is ready once it ignores SIGTERM, with a grace of 0.2 s. */
function* spawnedIgnoringTerm(): Generator<B.Instruction, ChildProcess, unknown> {
  const child = yield* spawnProcess(
    process.execPath,
    ["-e", "process.on('SIGTERM', () => {}); process.stdout.write('ready'); setInterval(() => {}, 1000)"],
    { stdin: "ignore", stderr: "ignore", grace: 0.2 },
  );
  const buf = Buffer.alloc(8);
  yield* read(child.stdout!, buf);
  return child;
}
