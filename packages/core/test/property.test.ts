/**
 * Property-based test of the task tree: random programs of spawn / yield /
 * await / cancel / throw / spin / nested children (depth ≤ 3, async cleanup
 * in `finally`) run on the real scheduler and are checked against the
 * reference model of `support/model.ts`:
 * - every task ends exactly once, after its whole subtree, and before `run` settles;
 * - steps are atomic and tasks start in spawn order (FIFO, spawn never runs eagerly);
 * - a task ends `cancelled` exactly when a cancellation reached it (its parent's
 *   `cancel`, its parent's body ending, the run failing) before it ended, and
 *   `cancel` returns only once the whole subtree has ended;
 * - awaits return the child's actual outcome (`Cancelled` after a cancel);
 * - outcomes of the root and of every awaited task match the model, which
 *   also says which children can never start;
 * - `StillHasChildren` happens exactly when a task returned normally (without
 *   being cancelled) with an unconsumed child, and names that task and children.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import {
  type AwaitMode,
  check,
  type End,
  type Ev,
  normalize,
  type Observation,
  predict,
  type RawAction,
  type RawScript,
  type Script,
  ScriptError,
  show,
  showEvents,
  walk,
} from "./support/model.js";

// ---------------------------------------------------------------------------
// Running a program

type Gen<T> = Generator<B.Instruction, T, unknown>;

interface Ctx {
  readonly events: Ev[];
  readonly tasks: Map<string, B.Task<unknown>>;
}

/** A task of the program: logs every step of its script around the real operations. */
function* taskBody(ctx: Ctx, node: Script, path: string): Gen<string> {
  const self = B.self();
  ctx.tasks.set(path, self);
  ctx.events.push({ k: "start", path, uid: self.uid });
  try {
    const value = yield* script(ctx, node, path);
    ctx.events.push({ k: "bodyEnd", path, ok: true, value });
    return value;
  } catch (error) {
    ctx.events.push({ k: "bodyEnd", path, ok: false, error });
    throw error;
  }
}

function* script(ctx: Ctx, node: Script, path: string): Gen<string> {
  const log = ctx.events;
  const kids: B.Task<string>[] = [];
  try {
    for (let i = 0; i < node.actions.length; i++) {
      const a = node.actions[i]!;
      if (a.t === "spawn") {
        const child = `${path}.${kids.length}`;
        const t = B.spawn(taskBody, ctx, a.child, child);
        kids.push(t);
        ctx.tasks.set(child, t);
        log.push({ k: "spawned", path, i, child, uid: t.uid });
        continue;
      }
      log.push({ k: "begin", path, i });
      try {
        if (a.t === "yield") {
          yield* B.yieldNow();
          log.push({ k: "end", path, i, threw: false });
        } else if (a.t === "cancel") {
          yield* B.cancel(kids[a.k]!);
          log.push({ k: "end", path, i, threw: false, status: kids[a.k]!.status });
        } else if (a.mode === "task") {
          const r = yield* B.awaitTask(kids[a.k]!);
          log.push({ k: "end", path, i, threw: false, value: r });
        } else {
          const v = yield* B.awaitExn(kids[a.k]!);
          log.push({ k: "end", path, i, threw: false, value: v });
        }
      } catch (error) {
        log.push({ k: "end", path, i, threw: true, error });
        // `catch` swallows a child's ScriptError; never a cancellation.
        if (!(a.t === "await" && a.mode === "catch" && error instanceof ScriptError)) throw error;
      }
    }
    if (node.end === "throw") throw new ScriptError(path);
    if (node.end === "spin") {
      log.push({ k: "spin", path });
      for (;;) yield* B.yieldNow();
    }
    return path;
  } finally {
    log.push({ k: "cleanupBegin", path });
    for (let j = 0; j < node.cleanup; j++) yield* B.yieldNow();
    log.push({ k: "cleanupEnd", path });
  }
}

/** A run still going after this long is reported as a hang (and cancelled through its signal). */
const HANG_MS = 2000;

/** Runs a program on the real scheduler and records what happened. */
async function execute(program: Script, seed: number): Promise<Observation> {
  const ctx: Ctx = { events: [], tasks: new Map() };
  const spawnHook: { child: number; parent: number; childParent: number | null }[] = [];
  const offSpawn = B.onSpawn(
    (child, parent) => void spawnHook.push({ child: child.uid, parent: parent.uid, childParent: child.parent?.uid ?? null }),
  );
  const offExit = B.onExit((task, ending) => {
    ctx.events.push({ k: "exit", uid: task.uid, ending, parentUid: task.parent?.uid ?? null });
    return undefined;
  });
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  try {
    const hang = new Promise<"hang">((resolve) => {
      timer = setTimeout(() => {
        abort.abort(new Error("hang"));
        setTimeout(() => resolve("hang"), 500).unref();
      }, HANG_MS);
    });
    const settled = B.run(() => taskBody(ctx, program, "0"), { seed, signal: abort.signal }).then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    const run = await Promise.race([settled, hang]);
    const exitsAtSettle = ctx.events.filter((e) => e.k === "exit").length;
    const hung = run === "hang" || abort.signal.aborted;
    const statuses = new Map([...ctx.tasks].map(([path, t]) => [path, t.status] as const));
    return { events: ctx.events, spawnHook, run: hung ? { hung: true } : run, statuses, exitsAtSettle };
  } finally {
    clearTimeout(timer);
    offSpawn();
    offExit();
  }
}

async function verify(program: Script, seed: number): Promise<void> {
  const pred = predict(program);
  const obs = await execute(program, seed);
  const violations = check(program, pred, obs);
  count(program, obs);
  if (violations.length !== 0) {
    throw new Error(
      `${violations.join("\n")}\n--- program (seed ${seed}) ---\n${show(program)}\n--- events ---\n${showEvents(obs.events)}`,
    );
  }
}

/** What the random programs exercised, so that the test can tell it still covers the interesting cases. */
const tally = {
  runs: 0,
  stillHasChildren: 0,
  resolved: 0,
  rejectedOther: 0,
  interruptedActions: 0,
  interruptedCleanups: 0,
  neverStarted: 0,
  cancelsOfEndedChildren: 0,
  depth3: 0,
};

function count(program: Script, obs: Observation): void {
  const ev = obs.events;
  tally.runs++;
  if (!("hung" in obs.run)) {
    if (obs.run.ok) tally.resolved++;
    else if (obs.run.error instanceof B.StillHasChildren) tally.stillHasChildren++;
    else tally.rejectedOther++;
  }
  const nodes = new Map<string, Script>();
  walk(program, "0", (node, path) => nodes.set(path, node));
  const started = new Set<string>();
  const spawned: string[] = [];
  const pathOf = new Map<number, string>();
  const exitAt = new Map<string, number>();
  const cleanups = new Map<string, number>();
  ev.forEach((e, idx) => {
    if (e.k === "start") started.add(e.path);
    else if (e.k === "spawned") {
      spawned.push(e.child);
      pathOf.set(e.uid, e.child);
    } else if (e.k === "exit") exitAt.set(pathOf.get(e.uid) ?? "0", idx);
    else if (e.k === "end" && e.threw && e.error instanceof B.Cancelled) tally.interruptedActions++;
    else if (e.k === "cleanupBegin") cleanups.set(e.path, 1);
    else if (e.k === "cleanupEnd") cleanups.set(e.path, 0);
  });
  ev.forEach((e, idx) => {
    if (e.k !== "begin") return;
    const a = nodes.get(e.path)!.actions[e.i]!;
    if (a.t === "cancel" && (exitAt.get(`${e.path}.${a.k}`) ?? Infinity) < idx) tally.cancelsOfEndedChildren++;
  });
  for (const path of spawned) if (!started.has(path)) tally.neverStarted++;
  for (const n of cleanups.values()) tally.interruptedCleanups += n;
  if (spawned.some((p) => p.split(".").length === 4)) tally.depth3++;
}

// ---------------------------------------------------------------------------
// Generating programs

const MAX_DEPTH = 3;
/** Programs per test run; raise it for a soak: `BOBBIN_PROPERTY_RUNS=100000 npx vitest run test/property.test.ts`. */
const RUNS = Number(process.env.BOBBIN_PROPERTY_RUNS ?? 300);
const PER = Math.max(1, RUNS / 300);

function scriptArb(depth: number): fc.Arbitrary<RawScript> {
  const yieldA: fc.Arbitrary<RawAction> = fc.constant({ t: "yield" as const });
  const awaitA: fc.Arbitrary<RawAction> = fc.record({
    t: fc.constant("await" as const),
    k: fc.nat(7),
    mode: fc.constantFrom<AwaitMode>("task", "exn", "catch"),
  });
  const cancelA: fc.Arbitrary<RawAction> = fc.record({ t: fc.constant("cancel" as const), k: fc.nat(7) });
  const weighted: fc.WeightedArbitrary<RawAction>[] = [
    { arbitrary: yieldA, weight: 2 },
    { arbitrary: awaitA, weight: 4 },
    { arbitrary: cancelA, weight: 2 },
  ];
  if (depth < MAX_DEPTH) {
    weighted.push({ arbitrary: fc.record({ t: fc.constant("spawn" as const), child: scriptArb(depth + 1) }), weight: 6 });
  }
  return fc.record({
    actions: fc.array(fc.oneof(...weighted), { minLength: depth === 0 ? 2 : 0, maxLength: depth === 0 ? 8 : 5, size: "max" }),
    end: fc.oneof(
      { arbitrary: fc.constant<End>("return"), weight: 4 },
      { arbitrary: fc.constant<End>("throw"), weight: 2 },
      { arbitrary: fc.constant<End>("spin"), weight: 1 },
    ),
    cleanup: fc.oneof({ arbitrary: fc.constant(0), weight: 2 }, { arbitrary: fc.integer({ min: 1, max: 3 }), weight: 1 }),
    tidy: fc.oneof(
      { arbitrary: fc.constant("await" as const), weight: 6 },
      { arbitrary: fc.constant("cancel" as const), weight: 3 },
      { arbitrary: fc.constant(undefined), weight: 2 },
    ),
  });
}

const programArb: fc.Arbitrary<Script> = scriptArb(0).map((raw) => normalize(raw));

// ---------------------------------------------------------------------------
// Tests

/** Shorthands for hand-written programs. */
const S = (end: End, actions: RawAction[] = [], cleanup = 0): RawScript => ({ actions, end, cleanup });
const spawn = (child: RawScript): RawAction => ({ t: "spawn", child });
const aw = (k: number, mode: AwaitMode = "task"): RawAction => ({ t: "await", k, mode });
const cancel = (k: number): RawAction => ({ t: "cancel", k });
const yld: RawAction = { t: "yield" };

describe("the model agrees with hand-written programs", () => {
  const cases: [string, RawScript, (pred: ReturnType<typeof predict>) => void][] = [
    ["a forgotten child is StillHasChildren", S("return", [spawn(S("return"))]), (p) => expect(p.detFatal).toBe(true)],
    [
      "a cancelled spinner, then return",
      S("return", [spawn(S("spin", [], 2)), yld, cancel(0)]),
      (p) => expect(p.root).toEqual({ ok: true, value: "0" }),
    ],
    [
      "a failing child cancels its own spinning child; awaitExn propagates the error",
      S("return", [spawn(S("throw", [spawn(S("spin", [], 1)), yld])), aw(0, "exn")]),
      (p) => expect(p.root).toEqual({ ok: false, error: { kind: "script", path: "0.0" } }),
    ],
    [
      "a caught child error, then a forgotten child",
      S("return", [spawn(S("throw")), spawn(S("spin")), aw(0, "catch")]),
      (p) => expect(p.detFatal).toBe(true),
    ],
    [
      "cancel in the spawning step: the child never starts",
      S("return", [spawn(S("return", [spawn(S("spin"))])), cancel(0), aw(0, "task")]),
      (p) => expect([...p.neverStarts]).toEqual(["0.0"]),
    ],
    [
      "awaiting an awaited child returns the same result; cancel after await makes it Cancelled",
      S("throw", [spawn(S("return", [], 1)), yld, aw(0, "exn"), aw(0, "exn"), cancel(0), aw(0, "task")]),
      (p) => expect(p.root).toEqual({ ok: false, error: { kind: "script", path: "0" } }),
    ],
    [
      "a task cancelled while it awaits its own child: the grandchild is cancelled too",
      S("return", [
        spawn(S("return", [spawn(S("spin", [], 2)), yld, spawn(S("return", [yld, yld])), aw(1, "exn"), cancel(0)], 1)),
        yld,
        yld,
        cancel(0),
      ]),
      (p) => expect(p.root).toEqual({ ok: true, value: "0" }),
    ],
  ];
  for (const [name, raw, expectation] of cases) {
    it(name, async () => {
      const program = normalize(raw);
      expectation(predict(program));
      await verify(program, 1);
    });
  }
});

describe("random programs of spawn / await / cancel / yield / throw", () => {
  it(
    "match the model and keep the task-tree rules",
    async () => {
      await fc.assert(
        fc.asyncProperty(programArb, fc.integer(), async (program, seed) => {
          await verify(program, seed);
        }),
        { numRuns: RUNS, interruptAfterTimeLimit: 15_000 * PER, markInterruptAsFailure: true },
      );
      // The generator must keep reaching the interesting cases (loose bounds: about a quarter of the usual counts).
      const per = PER;
      expect(tally.runs).toBeGreaterThanOrEqual(RUNS);
      expect(tally.stillHasChildren).toBeGreaterThanOrEqual(10 * per);
      expect(tally.resolved).toBeGreaterThanOrEqual(30 * per);
      expect(tally.rejectedOther).toBeGreaterThanOrEqual(20 * per);
      expect(tally.interruptedActions).toBeGreaterThanOrEqual(50 * per);
      expect(tally.interruptedCleanups).toBeGreaterThanOrEqual(3 * per);
      expect(tally.neverStarted).toBeGreaterThanOrEqual(30 * per);
      expect(tally.cancelsOfEndedChildren).toBeGreaterThanOrEqual(20 * per);
      expect(tally.depth3).toBeGreaterThanOrEqual(15 * per);
    },
    20_000 * PER,
  );
});
