/**
 * Child processes and pipes on the libuv backend: the ports of Miou's
 * test_unix.ml tests, and what spawnProcess checks and does that the
 * conformance suite (every backend) does not repeat.
 */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { failure, processGone as gone, thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { type ChildProcess, close, onSignal, type ProcessExit, read, run, sleep, spawnProcess } from "../src/index.js";

/** Whether process `pid` is gone within 2 s, polled in the run (a process left to the run's end is not). */
function* eventuallyGone(pid: number): Generator<B.Instruction, boolean, unknown> {
  for (let i = 0; i < 200 && !gone(pid); i++) yield* sleep(0.01);
  return gone(pid);
}

describe("Miou's test_unix.ml", () => {
  it("test01, eof on pipe: the stdout of `true` reads 0 once it exited, before a 1 s timeout", async () => {
    const eof = await run(function* () {
      const child = yield* spawnProcess("true", [], { stdin: "ignore", stderr: "ignore" });
      const buf = Buffer.alloc(1);
      const reading = B.spawn(function* () {
        return (yield* read(child.stdout!, buf)) === 0;
      });
      const timeout = B.spawn(function* () {
        yield* sleep(1);
        return false;
      });
      const first = yield* B.awaitFirst([reading, timeout]);
      yield* child.wait();
      yield* close(child.stdout!);
      return first;
    });
    expect(eof).toEqual({ ok: true, value: true });
  });

  it("test02, a child waited from a signal handler: the child signals its parent (SIGUSR2, as SIGCHLD is not Node's), the handler waits for it", async () => {
    const [exit, pid] = await run(function* () {
      let child: ChildProcess | null = null;
      const waited = new L.Trigger();
      let status: ProcessExit | null = null;
      onSignal("SIGUSR2", function* () {
        while (child === null) yield* sleep(0.005); // the signal may come before spawnProcess returned
        status = yield* (child as ChildProcess).wait();
        waited.signal();
      });
      child = yield* spawnProcess("sh", ["-c", "kill -USR2 $PPID"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
      yield* waited.wait();
      return [status, child.pid] as const;
    });
    expect(exit).toEqual({ code: 0, signal: null });
    expect(gone(pid)).toBe(true);
  });
});

describe("spawnProcess", () => {
  it("kill(signal) sends it: wait gives the signal; a second kill after the exit returns false", async () => {
    const [exit, sent, again, noted] = await run(function* () {
      const child = yield* spawnProcess("sleep", ["30"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
      const sent = child.kill("SIGINT");
      const exit = yield* child.wait();
      return [exit, sent, child.kill(), child.exit];
    });
    expect(exit).toEqual({ code: null, signal: "SIGINT" });
    expect([sent, again]).toEqual([true, false]);
    expect(noted).toEqual(exit);
  });

  it("an owner that returns without waiting: the process gets SIGTERM and is reaped while the run goes on", async () => {
    let pid = -1;
    const goneInRun = await run(function* () {
      const owner = B.spawn(function* () {
        const child = yield* spawnProcess("sleep", ["30"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
        pid = child.pid;
      });
      yield* B.awaitExn(owner);
      return yield* eventuallyGone(pid);
    });
    expect(pid).toBeGreaterThan(0);
    expect(goneInRun).toBe(true);
  });

  it("an owner that fails: the process is killed too, and the failure is the run's", async () => {
    let pid = -1;
    const error = await run(function* () {
      const owner = B.spawn(function* () {
        const child = yield* spawnProcess("sleep", ["30"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
        pid = child.pid;
        throw new Error("the owner failed");
      });
      return [yield* failure(() => B.awaitExn(owner)), yield* eventuallyGone(pid)];
    });
    expect(String(error[0])).toMatch(/the owner failed/);
    expect(error[1]).toBe(true);
  });

  it("a process the run still has when it ends is killed and reaped before run settles", async () => {
    let pid = -1;
    await run(function* () {
      const child = yield* spawnProcess("sleep", ["30"], { stdin: "ignore", stdout: "ignore", stderr: "ignore", grace: 30 });
      pid = child.pid;
    });
    expect(gone(pid)).toBe(true);
  });

  it('"inherit" and "ignore" give no socket', async () => {
    const sockets = await run(function* () {
      const child = yield* spawnProcess("true", [], { stdin: "ignore", stdout: "inherit", stderr: "ignore" });
      yield* child.wait();
      return [child.stdin, child.stdout, child.stderr];
    });
    expect(sockets).toEqual([null, null, null]);
  });

  it("checks its arguments before starting anything", async () => {
    const errors = await run(function* () {
      return [
        thrownBy(() => spawnProcess("")),
        thrownBy(() => spawnProcess("ls", "-l" as never)),
        thrownBy(() => spawnProcess("ls", [], null as never)),
        thrownBy(() => spawnProcess("ls", [], { stdout: "file" as never })),
        thrownBy(() => spawnProcess("ls", [], { grace: -1 })),
      ];
    });
    expect(errors.map((e) => (e as Error).constructor.name)).toEqual(["TypeError", "TypeError", "TypeError", "TypeError", "RangeError"]);
    expect(String(errors[3])).toMatch(/stdout must be "pipe", "inherit" or "ignore"/);
    expect(String(thrownBy(() => spawnProcess("ls")))).toMatch(/inside a task/);
  });
});
