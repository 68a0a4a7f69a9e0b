/**
 * Model-based test of the kernel: random programs (fast-check) of spawn /
 * yield / await / cancel / throw / spin, awaitAll / awaitOne / awaitFirst
 * (a task possibly listed twice), triggers, syscalls of a test events
 * backend, `protect`, and background children with Miou's care / take / get /
 * drain, nested three deep with asynchronous cleanup in `finally`, run on the
 * real kernel (in its own order, or under a seeded random scheduling policy)
 * and checked against the reference model of `support/model.ts`.
 *
 * A failure prints the program, the event log and the fast-check seed and
 * path; replay it with
 * `BOBBIN_PROPERTY_SEED=<seed> BOBBIN_PROPERTY_PATH=<path> npx vitest run test/property.test.ts`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type AwaitMode,
  type ConsumeBy,
  type Coverage,
  check,
  type End,
  type JoinMode,
  normalize,
  predict,
  type RawAction,
  type RawScript,
  type Script,
  type SyscallMode,
  show,
  showEvents,
} from "./support/model.js";
import { HANG_MS, type RunParams, runProgram } from "./support/run-program.js";

const FIFO: Omit<RunParams, "seed"> = { pollEvery: 64, policy: "fifo" };

/** Runs `program` and holds the run to the model; returns what it exercised. */
async function verify(program: Script, params: RunParams): Promise<Set<Coverage>> {
  const obs = await runProgram(program, params);
  const { violations, reached } = check(program, predict(program), obs);
  if (violations.length !== 0) {
    throw new Error(
      `${violations.join("\n")}\n--- program (run ${JSON.stringify(params)}) ---\n${show(program)}\n--- events ---\n${showEvents(obs.events)}`,
    );
  }
  return reached;
}

// ---------------------------------------------------------------------------
// Generating programs

/** Programs per test run; raise it for a soak: `BOBBIN_PROPERTY_RUNS=100000 npx vitest run test/property.test.ts`. */
const RUNS = Number(process.env.BOBBIN_PROPERTY_RUNS ?? 400);
const SCALE = Math.max(1, RUNS / 400);
/**
 * How long programs are drawn for. fast-check skips, rather than fails, a run
 * still going when its time is up: the time limit leaves a run that starts
 * within this budget the whole hang bound, so that a hang is always reported.
 */
const BUDGET_MS = 10_000 * SCALE;

/** The shape of the programs drawn. */
interface Mix {
  /** How often each kind of action is drawn (0: never). */
  readonly weights: Readonly<Record<RawAction["t"], number>>;
  /** How often a script's next actions are an episode instead (see `episodeArb`). */
  readonly episodes: number;
  /** How often (in percent) a child goes into its parent's collector. */
  readonly orphans: number;
  /** How deep children nest, and how many actions a child's script has at most. */
  readonly depth: number;
  readonly childActions: number;
}

const NONE: Mix["weights"] = {
  spawn: 0,
  yield: 0,
  await: 0,
  cancel: 0,
  join: 0,
  wait: 0,
  signal: 0,
  syscall: 0,
  protect: 0,
  care: 0,
  take: 0,
  get: 0,
  drain: 0,
};

/**
 * The first mix draws every action freely; the others draw the actions of one
 * area, and episodes that set up its rarer situations (a race whose losers are
 * cancelled, a collector with ended tasks, a parent cancelled while it ends...).
 */
const MIXES: readonly Mix[] = [
  {
    weights: {
      spawn: 8,
      yield: 4,
      await: 3,
      cancel: 2,
      join: 3,
      wait: 2,
      signal: 2,
      syscall: 2,
      protect: 2,
      care: 1,
      take: 1,
      get: 1,
      drain: 1,
    },
    episodes: 3,
    orphans: 40,
    depth: 3,
    childActions: 5,
  },
  { weights: { ...NONE, spawn: 8, yield: 4, await: 4, cancel: 3, join: 4 }, episodes: 8, orphans: 0, depth: 3, childActions: 4 },
  {
    weights: { ...NONE, spawn: 8, yield: 4, cancel: 3, care: 3, take: 2, get: 3, drain: 2 },
    episodes: 8,
    orphans: 85,
    depth: 2,
    childActions: 3,
  },
  {
    weights: { ...NONE, spawn: 6, yield: 3, await: 2, cancel: 3, wait: 4, signal: 4, syscall: 3, protect: 3 },
    episodes: 8,
    orphans: 20,
    depth: 2,
    childActions: 4,
  },
];

const k = fc.nat(7);
const pause = (n: fc.Arbitrary<number>): fc.Arbitrary<RawAction> => fc.record({ t: fc.constant("yield" as const), n });
const maybePause = fc.option(pause(fc.constantFrom(1, 2, 3, 5)), { freq: 2, nil: undefined });
const cleanupArb = fc.oneof({ arbitrary: fc.constant(0), weight: 1 }, { arbitrary: fc.integer({ min: 1, max: 4 }), weight: 1 });
const tidyArb = fc.oneof(
  { arbitrary: fc.constant("await" as const), weight: 6 },
  { arbitrary: fc.constant("cancel" as const), weight: 3 },
  { arbitrary: fc.constant(undefined), weight: 2 },
);
const endArb = fc.oneof(
  { arbitrary: fc.constant<End>("return"), weight: 4 },
  { arbitrary: fc.constant<End>("throw"), weight: 2 },
  { arbitrary: fc.constant<End>("spin"), weight: 1 },
);

function actionArb(mix: Mix, depth: number, t: RawAction["t"]): fc.Arbitrary<RawAction> {
  switch (t) {
    case "spawn":
      return fc.record({
        t: fc.constant("spawn" as const),
        child: fc.constant(null).chain(() => scriptArb(mix, depth + 1)),
        orphan: fc.oneof(
          { arbitrary: fc.constant(true), weight: mix.orphans },
          { arbitrary: fc.constant(false), weight: 100 - mix.orphans },
        ),
      });
    case "yield":
      return pause(fc.constantFrom(1, 1, 2, 3, 5));
    case "await":
      return fc.record({ t: fc.constant("await" as const), k, mode: fc.constantFrom<AwaitMode>("task", "exn", "catch") });
    case "cancel":
      return fc.record({ t: fc.constant("cancel" as const), k });
    case "join":
      return fc.record({
        t: fc.constant("join" as const),
        mode: fc.constantFrom<JoinMode>("all", "one", "first"),
        ks: fc.array(k, { minLength: 1, maxLength: 3, size: "max" }),
      });
    case "wait":
      return fc.constant({ t: "wait" as const });
    case "signal":
      return fc.record({ t: fc.constant("signal" as const), k });
    case "syscall":
      return fc.record({ t: fc.constant("syscall" as const), mode: fc.constantFrom<SyscallMode>("ready", "early", "never") });
    case "protect":
      return fc.record({
        t: fc.constant("protect" as const),
        yields: fc.constantFrom(0, 1, 2, 3),
        throwing: fc.oneof({ arbitrary: fc.constant(false), weight: 6 }, { arbitrary: fc.constant(true), weight: 1 }),
      });
    case "take":
      return fc.record({ t: fc.constant("take" as const), by: fc.constantFrom<ConsumeBy>("await", "cancel") });
    default:
      return fc.constant({ t });
  }
}

/**
 * A few actions that set up one situation: children spawned, time for them to
 * run, then what the area is about (negative `k`s name the children just
 * spawned, see `normalize`).
 */
/** A script that first lets others run for a while. */
const slow = (script: RawScript): RawScript => ({ ...script, actions: [{ t: "yield", n: 3 }, ...script.actions] });

function episodeArb(mix: Mix, depth: number): fc.Arbitrary<RawAction[]> {
  const child = fc.constant(null).chain(() => scriptArb(mix, depth + 1));
  const spawnAll = (children: RawScript[], orphan: boolean): RawAction[] => children.map((c) => ({ t: "spawn", child: c, orphan }));
  const then = (...parts: (RawAction | RawAction[] | undefined)[]): RawAction[] => parts.flat().filter((a) => a !== undefined);
  const episodes: Record<string, fc.Arbitrary<RawAction[]>> = {
    // A race: awaitAll / awaitOne / awaitFirst over the children just spawned, one possibly listed twice.
    race: fc
      .tuple(fc.array(child, { minLength: 2, maxLength: 3 }), maybePause, fc.constantFrom<JoinMode>("all", "one", "first"), fc.boolean())
      .map(([children, p, mode, twice]) =>
        then(spawnAll(children, false), p, {
          t: "join",
          mode,
          ks: [-1, -2, ...(children.length === 3 ? [-3] : []), ...(twice ? [-1] : [])],
        }),
      ),
    // Short children that succeed and fail, all ended when one is picked: a success must be preferred.
    settled: fc
      .tuple(
        fc.shuffledSubarray<End>(["return", "throw", "throw"], { minLength: 2 }),
        fc.constantFrom<JoinMode | "get">("one", "first", "get"),
      )
      .map(([ends, pick]) =>
        then(
          spawnAll(
            ends.map((end) => ({ actions: [], end, cleanup: 0 })),
            pick === "get",
          ),
          { t: "yield", n: 2 },
          pick === "get" ? { t: "get" } : { t: "join", mode: pick, ks: [-1, -2, -3] },
        ),
      ),
    // A collector with a few tasks, some of which ended, and Miou's operations on it.
    collector: fc
      .tuple(
        fc.array(child, { minLength: 1, maxLength: 3 }),
        maybePause,
        fc.array(fc.oneof(...(["care", "take", "get", "drain", "yield"] as const).map((t) => actionArb(mix, depth, t))), {
          minLength: 1,
          maxLength: 3,
        }),
      )
      .map(([children, p, ops]) => then(spawnAll(children, true), p, ops)),
    // A parent whose body fails while its child is still cleaning up, cancelled then.
    ending: fc
      .tuple(child, fc.integer({ min: 2, max: 4 }), fc.constantFrom<End>("spin", "return"), fc.integer({ min: 1, max: 4 }))
      .map(([grandchild, cleanup, end, n]) =>
        then(
          {
            t: "spawn",
            orphan: false,
            child: {
              actions: [
                { t: "spawn", orphan: false, child: { ...grandchild, end, cleanup } },
                { t: "yield", n: 1 },
              ],
              end: "throw",
              cleanup: 0,
            },
          },
          { t: "yield", n },
          { t: "cancel", k: -1 },
        ),
      ),
    // A child waiting on its trigger: signalled, or cancelled and then signalled.
    trigger: fc
      .tuple(child, maybePause, fc.boolean(), maybePause)
      .map(([c, p, cancelFirst, q]) =>
        then(
          { t: "spawn", orphan: false, child: { ...c, actions: [{ t: "wait" }, ...c.actions] } },
          p ?? { t: "yield", n: 1 },
          cancelFirst ? { t: "cancel", k: -1 } : undefined,
          q,
          { t: "signal", k: -1 },
        ),
      ),
    // A child waiting in get on its own collector, cancelled there.
    cancelledGet: fc
      .tuple(child, fc.array(child, { minLength: 1, maxLength: 2 }), pause(fc.constantFrom(1, 2, 3)))
      .map(([c, background, p]) =>
        then(
          {
            t: "spawn",
            orphan: false,
            child: { ...c, actions: [...spawnAll(background.map(slow), true), { t: "get" }, ...c.actions] },
          },
          p,
          { t: "cancel", k: -1 },
        ),
      ),
    // A child in protect (whose onCancellation may throw), or parked on a syscall, cancelled there.
    cleanup: fc
      .tuple(
        child,
        fc.oneof(
          fc.record({
            t: fc.constant("protect" as const),
            yields: fc.constantFrom(1, 2, 3),
            throwing: fc.constantFrom(false, false, true),
          }),
          actionArb(mix, depth, "syscall"),
        ),
        pause(fc.constantFrom(1, 1, 2)),
      )
      .map(([c, inner, p]) =>
        then({ t: "spawn", orphan: false, child: { ...c, actions: [inner, ...c.actions] } }, p, { t: "cancel", k: -1 }),
      ),
  };
  const pickFor: Record<number, string[]> = {
    0: Object.keys(episodes),
    1: ["race", "race", "ending", "ending", "settled"],
    2: ["collector", "collector", "cancelledGet", "settled"],
    3: ["trigger", "cleanup"],
  };
  return fc.oneof(...(pickFor[MIXES.indexOf(mix)] ?? []).map((name) => episodes[name]!));
}

function scriptArb(mix: Mix, depth: number): fc.Arbitrary<RawScript> {
  const units: fc.WeightedArbitrary<RawAction[]>[] = (Object.keys(mix.weights) as RawAction["t"][])
    .filter((t) => mix.weights[t] > 0 && (t !== "spawn" || depth < mix.depth))
    .map((t) => ({ arbitrary: actionArb(mix, depth, t).map((a) => [a]), weight: mix.weights[t] }));
  if (depth < mix.depth && mix.episodes > 0) units.push({ arbitrary: episodeArb(mix, depth), weight: mix.episodes });
  return fc.record({
    actions: fc
      .array(fc.oneof(...units), { minLength: depth === 0 ? 2 : 0, maxLength: depth === 0 ? 8 : mix.childActions, size: "max" })
      .map((list) => list.flat()),
    end: endArb,
    cleanup: cleanupArb,
    tidy: tidyArb,
  });
}

const programArb: fc.Arbitrary<Script> = fc.oneof(...MIXES.map((mix) => scriptArb(mix, 0).map((raw) => normalize(raw))));
const paramsArb: fc.Arbitrary<RunParams> = fc.record({
  seed: fc.integer(),
  pollEvery: fc.constantFrom(1, 2, 64),
  policy: fc.constantFrom("fifo" as const, "random" as const),
});

// ---------------------------------------------------------------------------
// Tests

/** Shorthands for hand-written programs. */
const S = (end: End, actions: RawAction[] = [], cleanup = 0): RawScript => ({ actions, end, cleanup });
const spawn = (child: RawScript): RawAction => ({ t: "spawn", child, orphan: false });
const orphan = (child: RawScript): RawAction => ({ t: "spawn", child, orphan: true });
const aw = (k: number, mode: AwaitMode = "task"): RawAction => ({ t: "await", k, mode });
const cancel = (k: number): RawAction => ({ t: "cancel", k });
const join = (mode: JoinMode, ...ks: number[]): RawAction => ({ t: "join", mode, ks });
const signal = (k: number): RawAction => ({ t: "signal", k });
const syscall = (mode: SyscallMode): RawAction => ({ t: "syscall", mode });
const protect = (yields: number, throwing = false): RawAction => ({ t: "protect", yields, throwing });
const take = (by: ConsumeBy): RawAction => ({ t: "take", by });
const yld: RawAction = { t: "yield", n: 1 };
const wait: RawAction = { t: "wait" };
const care: RawAction = { t: "care" };
const get: RawAction = { t: "get" };
const drain: RawAction = { t: "drain" };

describe("the model agrees with hand-written programs", () => {
  const cases: [string, RawScript, Coverage[]][] = [
    ["a forgotten child is StillHasChildren", S("return", [spawn(S("return"))]), ["stillHasChildren"]],
    ["a cancelled spinner, then return", S("return", [spawn(S("spin", [], 2)), yld, cancel(0)]), ["resolved"]],
    [
      "a failing child cancels its own spinning child; awaitExn propagates the error",
      S("return", [spawn(S("throw", [spawn(S("spin", [], 1)), yld])), aw(0, "exn")]),
      ["rejected"],
    ],
    [
      "cancel in the spawning step: the child never starts",
      S("return", [spawn(S("return", [spawn(S("spin"))])), cancel(0), aw(0)]),
      ["neverStarted"],
    ],
    [
      "a task cancelled while it awaits its own child: the grandchild is cancelled too",
      S("return", [
        spawn(S("return", [spawn(S("spin", [], 2)), yld, spawn(S("return", [yld, yld])), aw(1, "exn"), cancel(0)], 1)),
        yld,
        yld,
        cancel(0),
      ]),
      ["resolved", "interruptedStep"],
    ],
    [
      "cancelling a parent that is ending: its body failed, its child is still cleaning up",
      S("return", [spawn(S("throw", [spawn(S("spin", [], 3)), yld])), yld, yld, yld, cancel(0)]),
      ["cancelOfEndingParent"],
    ],
    [
      "a task that awaits a child it cancelled fails with that child's Cancelled; cancelled while it ends, that is what its cancel throws",
      S("return", [
        spawn(S("spin", [spawn(S("spin")), yld, cancel(0), orphan(S("return", [], 8)), aw(0, "exn")])),
        yld,
        yld,
        yld,
        yld,
        cancel(0),
      ]),
      ["cancelOfEndingParent"],
    ],
    [
      "a signal before the wait: the wait returns at once",
      S("return", [spawn(S("return", [yld, wait])), signal(0), aw(0)]),
      ["signalBeforeWait"],
    ],
    ["a signal wakes the waiter", S("return", [spawn(S("return", [wait])), yld, signal(0), aw(0)]), ["signalWokeWaiter"]],
    [
      "a cancelled waiter whose trigger is signalled later: signal() returns false",
      S("return", [spawn(S("return", [wait], 1)), yld, cancel(0), signal(0)]),
      ["signalAfterCancelledWait"],
    ],
    [
      "syscalls: ready, signalled early, and one cancelled while suspended (reported once)",
      S("return", [syscall("ready"), syscall("early"), spawn(S("return", [syscall("never")])), yld, cancel(0)]),
      ["syscallReady", "syscallEarly", "syscallCancelled"],
    ],
    [
      "care: undefined when empty, null before any ended, then the ended task",
      S("return", [care, orphan(S("return", [yld])), care, yld, yld, yld, care]),
      ["careEmpty", "careNull", "careTask"],
    ],
    [
      "take hands over a running task at once, then an ended one, then undefined",
      S("return", [orphan(S("spin")), orphan(S("return")), take("await"), yld, take("await"), take("await")]),
      ["takePending", "takeEnded", "takeEmpty"],
    ],
    [
      "get waits for one task; undefined when empty",
      S("return", [orphan(S("return", [yld, yld])), orphan(S("throw", [yld])), get, get, get]),
      ["getWaited", "getEmpty"],
    ],
    [
      "drain consumes every background task",
      S("return", [orphan(S("return", [yld])), orphan(S("throw")), orphan(S("return")), drain]),
      ["drain"],
    ],
    [
      "protect: onCancellation at once, then finally(true)",
      S("return", [spawn(S("return", [protect(2)])), yld, cancel(0)]),
      ["onCancellation", "finallyCancelled"],
    ],
    [
      "an onCancellation that throws fails the run",
      S("return", [spawn(S("return", [protect(2, true)])), yld, cancel(0)]),
      ["callbackFailed"],
    ],
    [
      "awaitAll with a task listed twice",
      S("return", [spawn(S("return", [yld])), spawn(S("throw")), join("all", -2, -1, -2)]),
      ["awaitAllTwice"],
    ],
    [
      "awaitFirst cancels the losers and waits for them",
      S("return", [spawn(S("return")), spawn(S("spin", [], 2)), join("first", -1, -2, -1)]),
      ["awaitFirstLosers"],
    ],
    [
      "awaitOne leaves the others running",
      S("return", [spawn(S("return", [yld, yld])), spawn(S("return")), join("one", -2, -1), aw(0)]),
      ["awaitOne"],
    ],
  ];
  for (const [name, raw, expected] of cases) {
    it(name, async () => {
      const program = normalize(raw);
      const reached = await verify(program, { ...FIFO, seed: 1 });
      for (const tag of expected) expect(reached, tag).toContain(tag);
    });
  }
});

/**
 * How many of 400 programs reach each situation, at least (about a quarter of
 * the usual counts): the generator must keep covering them.
 */
const LEAST: Readonly<Record<Coverage, number>> = {
  resolved: 50,
  stillHasChildren: 12,
  callbackFailed: 1,
  rejected: 30,
  interruptedStep: 50,
  interruptedCleanup: 18,
  neverStarted: 50,
  cancelOfEndedChild: 15,
  cancelOfEndingParent: 10,
  depth3: 25,
  signalBeforeWait: 3,
  signalWokeWaiter: 6,
  signalAfterCancelledWait: 7,
  syscallReady: 14,
  syscallEarly: 8,
  syscallCancelled: 7,
  careTask: 3,
  careNull: 12,
  careEmpty: 12,
  takePending: 25,
  takeEnded: 10,
  takeEmpty: 20,
  getAtOnce: 2,
  getWaited: 6,
  getCancelled: 10,
  getEmpty: 15,
  drain: 2,
  onCancellation: 4,
  finallyCancelled: 5,
  awaitAllTwice: 4,
  awaitOne: 8,
  awaitFirstLosers: 10,
  randomPick: 2,
};

describe("random programs", () => {
  it(
    "match the model and keep the task-tree rules",
    async () => {
      const reached = new Map<Coverage, number>();
      const seed =
        process.env.BOBBIN_PROPERTY_SEED === undefined
          ? (Date.now() ^ (Math.random() * 2 ** 31)) | 0
          : Number(process.env.BOBBIN_PROPERTY_SEED);
      const details = await fc.check(
        fc.asyncProperty(programArb, paramsArb, async (program, params) => {
          for (const tag of await verify(program, params)) reached.set(tag, (reached.get(tag) ?? 0) + 1);
        }),
        // A loaded machine may run fewer programs in the time; the coverage bounds below follow.
        { numRuns: RUNS, seed, path: process.env.BOBBIN_PROPERTY_PATH, interruptAfterTimeLimit: BUDGET_MS + HANG_MS + 1000 },
      );
      if (details.failed) {
        const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
        throw new Error(
          `replay with BOBBIN_PROPERTY_SEED=${details.seed} BOBBIN_PROPERTY_PATH=${details.counterexamplePath}\n${fc.defaultReportMessage(details)}\n${error}`,
        );
      }
      for (const [tag, n] of Object.entries(LEAST) as [Coverage, number][]) {
        expect(reached.get(tag) ?? 0, tag).toBeGreaterThanOrEqual(Math.floor((n * details.numRuns) / 400));
      }
    },
    BUDGET_MS + HANG_MS + 10_000,
  );
});
