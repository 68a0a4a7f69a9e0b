/** `dump` and `formatDump`: the task tree as plain data, every domain included, and as text. */
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import * as D from "../../dist-dev/index.js";
import * as B from "../../src/index.js";
import * as L from "../../src/lowlevel/index.js";
import * as F from "../fixtures/parallel-tasks.mjs";

function* parkForever(): Generator<B.Instruction, void, unknown> {
  yield* new L.Trigger().wait();
}

/** Finds a task of a dump by name (depth first). */
function find(tasks: readonly B.TaskDump[], name: string): B.TaskDump | undefined {
  for (const t of tasks) {
    if (t.name === name) return t;
    const inner = find(t.children, name);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

describe("dump", () => {
  it("gives each task's uid, name, domain, state and what it waits on in words", async () => {
    const taken = await B.run(function* main() {
      const trigger = B.spawn(parkForever);
      const awaiter = B.spawn(function* awaiter() {
        yield* B.awaitExn(B.spawn({ name: "awaited" }, parkForever));
      });
      const selecting = B.spawn(function* selecting() {
        yield* B.select([B.timeout(60_000)]);
      });
      const ended = B.spawn(function* ended() {
        throw new Error("nobody awaited me yet");
      });
      yield* B.yieldNow();
      yield* B.yieldNow();
      const queued = B.spawn(function* queued() {});
      const dump = yield* B.promise(() => B.dump());
      for (const t of [trigger, awaiter, selecting, queued]) yield* B.cancel(t);
      yield* B.awaitTask(ended);
      return dump;
    });
    expect(taken.unanswered).toEqual([]);
    expect(taken.tasks).toHaveLength(1);
    const main = taken.tasks[0]!;
    expect(main).toMatchObject({ uid: 1, name: "main", domain: 0, state: "running", cancelling: false, waitsOn: null });
    expect(main.children.map((c) => `${c.name}#${c.uid} ${c.state}`)).toEqual([
      "parkForever#2 waiting",
      "awaiter#3 waiting",
      "selecting#4 waiting",
      "ended#5 failed",
      "queued#7 ready",
    ]);
    expect(find(taken.tasks, "parkForever")!.waitsOn).toBe("wait on a trigger");
    expect(find(taken.tasks, "awaiter")!.waitsOn).toBe("await awaited#6");
    expect(find(taken.tasks, "awaited")!.waitsOn).toBe("wait on a trigger");
    expect(find(taken.tasks, "selecting")!.waitsOn).toMatch(/^select over \[timeout, (59|60)\.\d s left\]$/);
    // No ages were kept, except the root's (the kernel knows when the run started).
    expect(main.ageMs).toBeGreaterThanOrEqual(0);
    expect(find(taken.tasks, "awaiter")!.ageMs).toBeNull();
  });

  it("names the emitter and the event a task waits for with once, on or select", async () => {
    class Server extends EventEmitter {}
    const seen = await B.run(function* main() {
      const server = new Server();
      const stream = B.on(new EventEmitter(), "data");
      const tasks = [
        B.spawn(function* listening() {
          yield* B.once(server, "listening");
        }),
        B.spawn(function* reading() {
          yield* stream.next();
        }),
        B.spawn(function* selecting() {
          yield* B.select([B.once(new AbortController().signal, "abort"), B.once(server, Symbol.for("tick"))]);
        }),
      ];
      yield* B.yieldNow();
      const taken = yield* B.promise(() => B.dump());
      for (const t of tasks) yield* B.cancel(t);
      stream.close();
      return Object.fromEntries(taken.tasks[0]!.children.map((t) => [t.name, t.waitsOn]));
    });
    expect(seen).toEqual({
      listening: 'once "listening" of a Server',
      reading: 'next "data" of an EventEmitter',
      selecting: 'select over [once "abort" of an AbortSignal, once Symbol(tick) of a Server]',
    });
  });

  it("keeps ages with { taskAges: true }", async () => {
    const taken = await B.run(
      function* () {
        const t = B.spawn(parkForever);
        yield* B.promise(() => new Promise((resolve) => setTimeout(resolve, 30)));
        const dump = yield* B.promise(() => B.dump());
        yield* B.cancel(t);
        return dump;
      },
      { taskAges: true },
    );
    expect(find(taken.tasks, "parkForever")!.ageMs).toBeGreaterThanOrEqual(25);
  });

  it("shows a task that is ending (its body failed; it waits for its children)", async () => {
    const taken = await B.run(function* () {
      const t = B.spawn(function* failing() {
        B.spawn(function* cleanup() {
          try {
            yield* new L.Trigger().wait();
          } finally {
            yield* B.promise(() => new Promise((resolve) => setTimeout(resolve, 20)));
          }
        });
        yield* B.yieldNow();
        throw new Error("boom");
      });
      yield* B.yieldNow();
      yield* B.yieldNow();
      yield* B.yieldNow();
      const dump = yield* B.promise(() => B.dump());
      yield* B.awaitTask(t);
      return dump;
    });
    const failing = find(taken.tasks, "failing")!;
    expect(failing.state).toBe("ending");
    expect(failing.children[0]).toMatchObject({ name: "cleanup", state: "waiting", cancelling: true });
  });

  it("outside any task, dumps every run in progress on the thread; none: an empty list", async () => {
    expect((await B.dump()).tasks).toEqual([]);
    let release = (): void => undefined;
    const running = B.run(function* server() {
      yield* B.promise(() => new Promise<void>((resolve) => (release = resolve)));
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const taken = await B.dump();
    expect(taken.tasks.map((t) => `${t.name} ${t.state} ${t.waitsOn}`)).toEqual(["server waiting promise (anonymous)"]);
    release();
    await running;
  });

  it("puts the subtree a worker domain runs for a call under the caller's task", async () => {
    const flags = new SharedArrayBuffer(8);
    const taken = await D.run(
      function* main() {
        const remote = D.call({ name: "remote" }, F.sleeper, flags);
        while (Atomics.load(new Int32Array(flags), 0) === 0) yield* D.promise(() => new Promise((r) => setTimeout(r, 5)));
        const dump = yield* D.promise(() => D.dump());
        yield* D.cancel(remote);
        return dump;
      },
      { domains: 1 },
    );
    expect(taken.unanswered).toEqual([]);
    const proxy = find(taken.tasks, "remote")!;
    expect(proxy).toMatchObject({ domain: 0, state: "waiting", waitsOn: "call → domain 1" });
    expect(proxy.children).toHaveLength(1);
    expect(proxy.children[0]).toMatchObject({ name: "sleeper", domain: 1, state: "waiting", waitsOn: "promise (anonymous)" });
  });
});

describe("formatDump", () => {
  it("renders the tree, one task per line, with its state, age and wait", () => {
    const leaf = (name: string, uid: number, waitsOn: string | null): B.TaskDump => ({
      uid,
      name,
      domain: 0,
      state: waitsOn === null ? "ready" : "waiting",
      cancelling: false,
      ageMs: null,
      waitsOn,
      suspendedAt: null,
      children: [],
    });
    const text = B.formatDump({
      takenAt: Date.UTC(2025, 0, 2, 3, 4, 5),
      tasks: [
        {
          ...leaf("main", 1, "await handler#3"),
          ageMs: 12_345,
          children: [
            { ...leaf("acceptLoop", 2, "accept tcp4 127.0.0.1:3000 (listening)"), children: [leaf("inner", 4, null)] },
            { ...leaf("handler", 3, "call → domain 2"), cancelling: true, children: [{ ...leaf("work", 1, null), domain: 2 }] },
          ],
        },
      ],
      unanswered: [3],
      flight: [],
    });
    expect(text).toBe(
      [
        "Bobbin tasks at 2025-01-02T03:04:05.000Z:",
        "main#1 — waiting, 12.3 s: await handler#3",
        "├─ acceptLoop#2 — waiting: accept tcp4 127.0.0.1:3000 (listening)",
        "│  └─ inner#4 — ready",
        "└─ handler#3 — waiting (cancelling): call → domain 2",
        "   └─ work#1 @ domain 2 — ready",
        "(domains 3 did not answer within a second: their tasks are missing)",
        "",
      ].join("\n"),
    );
  });

  it("refuses what is not a dump", () => {
    expect(() => B.formatDump(null as never)).toThrow(TypeError);
  });
});
