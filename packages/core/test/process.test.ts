/**
 * Whole-process behaviour: exiting on its own, deadlocks, swallowed
 * cancellations. Each case runs in a child process against the built package
 * (turbo builds it before testing).
 */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIVE_HANDLES, type Ran, runNode } from "./support/processes.js";

const core = fileURLToPath(new URL("../dist-dev/index.js", import.meta.url));
const lowlevel = fileURLToPath(new URL("../dist-dev/lowlevel/index.js", import.meta.url));
let dir = "";

beforeAll(async () => {
  if (!existsSync(core)) throw new Error(`${core} is missing: run \`pnpm build\` (pnpm test builds it first)`);
  dir = await mkdtemp(join(tmpdir(), "bobbin-core-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs a JavaScript module body, with `B` and `L` imported, in a fresh Node process. */
async function runScript(body: string): Promise<Ran> {
  const file = join(dir, `case-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(file, `import * as B from ${JSON.stringify(core)};\nimport * as L from ${JSON.stringify(lowlevel)};\n${body}\n`);
  return runNode([file]);
}

describe("the process", () => {
  it("exits on its own once run has settled (no dangling handles)", async () => {
    const r = await runScript(`
      const v = await B.run(function* () {
        const t = B.spawn(function* () { yield* B.promise(() => new Promise((ok) => setTimeout(ok, 5))); return 1; });
        return yield* B.awaitExn(t);
      });
      console.log("value", v, "handles", JSON.stringify(${LIVE_HANDLES}));
    `);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("value 1 handles []");
    expect(r.code).toBe(0);
  });

  it("a run whose tasks can never be woken rejects with Deadlock instead of hanging or exiting silently", async () => {
    const r = await runScript(`
      try {
        await B.run(function* () { yield* new L.Trigger().wait(); });
        console.log("resolved?!");
      } catch (e) { console.log(e.name); }
    `);
    expect(r.stdout.trim()).toBe("Deadlock");
    expect(r.code).toBe(0);
  });

  it("the Deadlock of a drained loop names what nothing can wake and holds the task tree", async () => {
    const r = await runScript(`
      try {
        await B.run(function* main() {
          const t = B.spawn({ name: "stuck" }, function* () { yield* B.promise(() => new Promise(() => {})); });
          yield* B.awaitTask(t);
        });
      } catch (e) { console.log(JSON.stringify({ message: e.message, dump: e.dump, cycle: e.cycle })); }
    `);
    const { message, dump, cycle } = JSON.parse(r.stdout);
    expect(message).toMatch(/^2 task\(s\) are suspended and nothing can wake them up/);
    expect(message.split("\n")[0]).toMatch(/: a trigger, lock or condition is never signalled, or a promise never settles$/);
    expect(message).toMatch(/\nmain#1 — waiting, \d+ ms: await stuck#2\n└─ stuck#2 — waiting: promise/);
    expect(dump.tasks[0]).toMatchObject({ uid: 1, name: "main", state: "waiting", waitsOn: "await stuck#2" });
    expect(cycle).toBeNull();
  });

  it("a task waiting on B.timeout keeps the process alive (no Deadlock), and nothing is left once it fired", async () => {
    const r = await runScript(`
      await B.run(function* () { yield* B.select([B.timeout(30)]); });
      console.log("handles", JSON.stringify(${LIVE_HANDLES}));
    `);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("handles []");
  });

  it("a select whose timeout lost leaves no timer behind: the process exits at once", async () => {
    const r = await runScript(`
      const { EventEmitter } = await import("node:events");
      const emitter = new EventEmitter();
      const started = Date.now();
      const r = await B.run(function* () {
        setImmediate(() => emitter.emit("go", 1));
        return yield* B.select([B.once(emitter, "go"), B.timeout(60000)]);
      });
      console.log(r.index, JSON.stringify(${LIVE_HANDLES}), emitter.listenerCount("go"));
      process.on("exit", () => console.log(Date.now() - started < 10000 ? "exited soon" : "exited late"));
    `);
    expect(r.stdout.trim().split("\n")).toEqual(["0 [] 0", "exited soon"]);
  });

  it("a run whose only task waits on an event nobody emits rejects with Deadlock (a listener keeps nothing alive)", async () => {
    const r = await runScript(`
      const { EventEmitter } = await import("node:events");
      try {
        await B.run(function* () { yield* B.once(new EventEmitter(), "never"); });
      } catch (e) { console.log(e.name); }
    `);
    expect(r.stdout.trim()).toBe("Deadlock");
  });

  it("warns once about a task that keeps running long after it was cancelled", async () => {
    const r = await runScript(`
      await B.run(function* () {
        const t = B.spawn(function* () {
          const until = Date.now() + 2600;
          while (Date.now() < until) { try { yield* B.yieldNow(); } catch {} }
        });
        yield* B.yieldNow();
        yield* B.cancel(t);
      });
      console.log("done");
    `);
    expect(r.stdout.trim()).toBe("done");
    expect(r.stderr.match(/BOBBIN_SWALLOWED_CANCEL/g)).toHaveLength(1);
  });

  it("does not warn of a cancelled task that waits longer than that for its children to end: their time is theirs", async () => {
    // A group's owner cancelled while its children clean up for 2.3 s, and an owner that catches
    // its Cancelled to await a child that finishes its work (as a server drains its requests):
    // neither runs after its cancellation, each waits on children, which are watched themselves.
    const r = await runScript(`
      const later = (ms) => B.promise(() => new Promise((ok) => setTimeout(ok, ms)));
      await B.run(function* () {
        const group = B.spawn({ name: "group owner" }, function* () {
          yield* B.group(function* (g) {
            g.spawn(function* () { try { yield* later(60_000); } finally { yield* later(2300); } });
          });
        });
        const owner = B.spawn({ name: "draining owner" }, function* () {
          const work = B.spawn(function* () { yield* later(2300); return "work done"; });
          try { yield* B.awaitExn(work); } catch { console.log(yield* B.awaitExn(work)); }
        });
        yield* later(50);
        yield* B.cancel(owner);
        yield* B.cancel(group);
      });
      console.log("done");
    `);
    expect(r.stdout.trim().split("\n")).toEqual(["work done", "done"]);
    expect(r.stderr).not.toMatch(/BOBBIN_SWALLOWED_CANCEL.*owner/);
  });

  it("does not warn of a swallowed cancellation for a call whose parallel task runs a loop: nothing swallowed it", async () => {
    // The call's proxy waits past 2 s for the other domain, which hears the cancellation
    // only once its loop yields (here never: it is terminated after the grace, and
    // DomainUnresponsive says why). The proxy is not a task that swallowed Cancelled.
    const parallel = fileURLToPath(new URL("./fixtures/parallel-tasks.mjs", import.meta.url));
    const r = await runScript(`
      const F = await import(${JSON.stringify(parallel)});
      try {
        await B.run(function* () {
          const flags = new SharedArrayBuffer(4);
          const t = B.call(F.spinForever, flags);
          while (Atomics.load(new Int32Array(flags), 0) === 0) yield* B.promise(() => new Promise((ok) => setTimeout(ok, 5)));
          yield* B.cancel(t);
        }, { domains: 1, cancelGraceMs: 2300 });
      } catch (e) { console.log(e.name); }
    `);
    expect(r.stdout.trim()).toBe("DomainUnresponsive");
    expect(r.stderr).not.toMatch(/BOBBIN_SWALLOWED_CANCEL/);
  });
});

describe("BOBBIN_DUMP_SIGNAL", () => {
  it("prints the task tree on stderr when the signal arrives, from a live program, which goes on", async () => {
    const file = join(dir, "live.mjs");
    await writeFile(
      file,
      `import * as B from ${JSON.stringify(core)};
      import * as L from ${JSON.stringify(lowlevel)};
      let stop;
      const alive = setInterval(() => {}, 1000); // what keeps a server's process alive: its listening socket, say
      const done = B.run(function* server() {
        const child = B.spawn(function* handler() { yield* new L.Trigger().wait(); });
        // The handler parks before "ready" (and so before the signal): a slice the
        // system preempts past its deadline gives Node's loop a turn between two tasks.
        yield* B.yieldNow();
        yield* B.promise(() => new Promise((resolve) => { stop = resolve; console.log("ready"); }));
        yield* B.cancel(child);
        return "stopped";
      });
      process.on("SIGTERM", () => { clearInterval(alive); stop(); });
      console.log(await done);`,
    );
    const child = spawn(process.execPath, [file], { env: { ...process.env, BOBBIN_DUMP_SIGNAL: "SIGUSR2" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
      if (stdout === "ready\n") child.kill("SIGUSR2");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
      if (stderr.includes("handler#2")) child.kill("SIGTERM");
    });
    const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    const code = await new Promise((resolve) => child.on("exit", resolve));
    clearTimeout(killer);
    expect(stderr).toMatch(
      /^Bobbin tasks at .*:\nserver#1 — waiting, [\d.]+ m?s: promise \(anonymous\)\n└─ handler#2 — waiting, [\d.]+ m?s: wait on a trigger\n$/,
    );
    expect(stdout).toBe("ready\nstopped\n");
    expect(code).toBe(0);
  });

  it("a value that is not a signal is a RangeError that names the variable", async () => {
    const bad = await new Promise<string>((resolve) =>
      execFile(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `import * as B from ${JSON.stringify(core)}; try { B.run(function* () {}); } catch (e) { console.log(e.name + ": " + e.message); }`,
        ],
        { env: { ...process.env, BOBBIN_DUMP_SIGNAL: "USR2" } },
        (_error, out) => resolve(out),
      ),
    );
    expect(bad.trim()).toBe('RangeError: BOBBIN_DUMP_SIGNAL must name a Unix signal Node can catch, such as "SIGUSR2", got "USR2"');
  });
});
