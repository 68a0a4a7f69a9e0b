/**
 * A reference model of Bobbin's task tree for the property test
 * (`test/property.test.ts`).
 *
 * A program is a tree of task scripts. Each script is a list of actions
 * (spawn a child with its own script, yield, await child k, cancel child k)
 * followed by an ending (return, throw, or spin — yield forever until
 * cancelled) and a `finally` block that yields `cleanup` times. Paths name
 * tasks statically: the root is "0", its second spawned child "0.1", etc.
 *
 * Two layers:
 * - `predict` computes what does not depend on interleaving: the natural
 *   outcome of the root and of every task its parent awaits (the
 *   "deterministic region"), whether a forgotten child is certain / possible,
 *   and which children can never start (cancelled in the very step that
 *   spawned them).
 * - `check` replays every task's script against the observed event log and
 *   checks the rules that must hold whatever the interleaving: every task
 *   ends exactly once and after its children; steps are atomic and tasks
 *   start in spawn order (FIFO, no eager spawn); a task ends `cancelled`
 *   exactly when a cancellation reached it before it ended; an await
 *   returns its child's actual outcome; `cancel` returns only after the
 *   whole subtree has ended; `StillHasChildren` happens exactly when a task
 *   returned normally (uncancelled) with an unconsumed child, and names
 *   that task and those children.
 */
import * as B from "../../src/index.js";

// ---------------------------------------------------------------------------
// Programs

export type AwaitMode = "task" | "exn" | "catch";
export type End = "return" | "throw" | "spin";

export type Action =
  | { readonly t: "spawn"; readonly child: Script }
  | { readonly t: "yield" }
  | { readonly t: "await"; readonly k: number; readonly mode: AwaitMode }
  | { readonly t: "cancel"; readonly k: number };

export interface Script {
  readonly actions: readonly Action[];
  readonly end: End;
  /** Yields in the `finally` block (asynchronous cleanup). */
  readonly cleanup: number;
}

/** What the generator produces: child indices are free numbers, fixed by `normalize`. */
export type RawAction =
  | { readonly t: "spawn"; readonly child: RawScript }
  | { readonly t: "yield" }
  | { readonly t: "await"; readonly k: number; readonly mode: AwaitMode }
  | { readonly t: "cancel"; readonly k: number };

export interface RawScript {
  readonly actions: readonly RawAction[];
  readonly end: End;
  readonly cleanup: number;
  /** Consume every child left unconsumed before the ending: "await" (cancel for spinners), "cancel", or forget them (undefined). */
  readonly tidy?: "await" | "cancel" | undefined;
}

/** The error a script's `throw` ending throws. */
export class ScriptError extends Error {
  constructor(readonly path: string) {
    super(`script ${path} threw`);
    this.name = "ScriptError";
  }
}

/**
 * Makes a raw script valid: `k` refers to an existing child (an await or
 * cancel before any spawn becomes a yield), a spinning child is never
 * awaited before it was cancelled (it would never end), the root never spins.
 * A `tidy` script consumes its leftover children before its ending.
 */
export function normalize(raw: RawScript, root = true): Script {
  const actions: Action[] = [];
  const kids: { spin: boolean; cancelled: boolean; consumed: boolean }[] = [];
  for (const a of raw.actions) {
    if (a.t === "spawn") {
      const child = normalize(a.child, false);
      kids.push({ spin: child.end === "spin", cancelled: false, consumed: false });
      actions.push({ t: "spawn", child });
    } else if (a.t === "yield" || kids.length === 0) {
      actions.push({ t: "yield" });
    } else {
      const k = a.k % kids.length;
      const kid = kids[k]!;
      kid.consumed = true;
      if (a.t === "cancel" || (kid.spin && !kid.cancelled)) {
        kid.cancelled = true;
        actions.push({ t: "cancel", k });
      } else {
        actions.push({ t: "await", k, mode: a.mode });
      }
    }
  }
  if (raw.tidy !== undefined) {
    kids.forEach((kid, k) => {
      if (kid.consumed) return;
      actions.push(raw.tidy === "cancel" || kid.spin ? { t: "cancel", k } : { t: "await", k, mode: "task" });
    });
  }
  return { actions, end: root && raw.end === "spin" ? "return" : raw.end, cleanup: raw.cleanup };
}

/** Calls `f` on every script of the program with its path. */
export function walk(node: Script, path: string, f: (node: Script, path: string) => void): void {
  f(node, path);
  let k = 0;
  for (const a of node.actions) if (a.t === "spawn") walk(a.child, `${path}.${k++}`, f);
}

/** A readable rendering of a program, for failure messages. */
export function show(node: Script, path = "0", indent = ""): string {
  const lines = [`${indent}${path}: ${node.end}${node.cleanup ? ` (cleanup ${node.cleanup})` : ""}`];
  let k = 0;
  for (const a of node.actions) {
    if (a.t === "spawn") lines.push(show(a.child, `${path}.${k++}`, `${indent}  `).replace(/^\s*/, `${indent}  spawn `));
    else if (a.t === "yield") lines.push(`${indent}  yield`);
    else if (a.t === "await") lines.push(`${indent}  await(${a.mode}) ${path}.${a.k}`);
    else lines.push(`${indent}  cancel ${path}.${a.k}`);
  }
  return lines.join("\n");
}

// ---------------------------------------------------------------------------
// Prediction (interleaving-independent)

export type ErrorTag = { kind: "script"; path: string } | { kind: "cancelled" } | { kind: "stillHasChildren"; path: string };
export type Outcome = { ok: true; value: string } | { ok: false; error: ErrorTag };

export interface Prediction {
  /** Scripts that return while some child has no await/cancel action at all: the only possible StillHasChildren culprits. */
  readonly staticForgetters: Set<string>;
  /** A task of the deterministic region returns with an unconsumed child: StillHasChildren is certain. */
  detFatal: boolean;
  /** The root's natural outcome. */
  root: Outcome;
  /** Natural outcome of every task in the deterministic region (exact whenever no StillHasChildren occurs). */
  readonly det: Map<string, Outcome>;
  /** Children cancelled in the step that spawned them: if spawned, they never run a step of their body. */
  readonly neverStarts: Set<string>;
}

export function predict(program: Script): Prediction {
  const pred: Prediction = {
    staticForgetters: new Set(),
    detFatal: false,
    root: { ok: true, value: "0" },
    det: new Map(),
    neverStarts: new Set(),
  };
  walk(program, "0", (node, path) => {
    const consumed = new Set<number>();
    let spawned = 0;
    // Children spawned since the last action that may suspend.
    let quiet: number[] = [];
    for (const a of node.actions) {
      if (a.t === "spawn") {
        quiet.push(spawned++);
        continue;
      }
      if (a.t === "cancel" && quiet.includes(a.k)) pred.neverStarts.add(`${path}.${a.k}`);
      if (a.t !== "yield") consumed.add(a.k);
      quiet = [];
    }
    if (node.end === "return" && consumed.size < spawned) pred.staticForgetters.add(path);
  });
  pred.root = natural(program, "0", pred);
  pred.det.set("0", pred.root);
  return pred;
}

/** What a task does when nothing cancels it: its children's outcomes come from their own scripts. */
function natural(node: Script, path: string, pred: Prediction): Outcome {
  const kids: { path: string; node: Script; cancelled: boolean; consumed: boolean; result: Outcome | null }[] = [];
  for (const a of node.actions) {
    if (a.t === "spawn") {
      kids.push({ path: `${path}.${kids.length}`, node: a.child, cancelled: false, consumed: false, result: null });
    } else if (a.t === "cancel") {
      kids[a.k]!.cancelled = kids[a.k]!.consumed = true;
    } else if (a.t === "await") {
      const kid = kids[a.k]!;
      kid.consumed = true;
      let r: Outcome;
      if (kid.cancelled) r = { ok: false, error: { kind: "cancelled" } };
      else {
        if (kid.result === null) {
          kid.result = natural(kid.node, kid.path, pred);
          pred.det.set(kid.path, kid.result);
        }
        r = kid.result;
      }
      if (!r.ok && a.mode !== "task" && !(a.mode === "catch" && r.error.kind === "script")) return r;
    }
  }
  switch (node.end) {
    case "throw":
      return { ok: false, error: { kind: "script", path } };
    case "spin":
      throw new Error(`model: spinning task ${path} in the deterministic region (normalize should prevent it)`);
    case "return":
      if (kids.some((k) => !k.consumed)) {
        pred.detFatal = true;
        return { ok: false, error: { kind: "stillHasChildren", path } };
      }
      return { ok: true, value: path };
  }
}

// ---------------------------------------------------------------------------
// Observation

export type Ev =
  | { k: "start"; path: string; uid: number }
  | { k: "spawned"; path: string; i: number; child: string; uid: number }
  | { k: "begin"; path: string; i: number }
  | { k: "end"; path: string; i: number; threw: boolean; value?: unknown; error?: unknown; status?: B.TaskStatus }
  | { k: "spin"; path: string }
  | { k: "cleanupBegin"; path: string }
  | { k: "cleanupEnd"; path: string }
  | { k: "bodyEnd"; path: string; ok: boolean; value?: unknown; error?: unknown }
  | { k: "exit"; uid: number; ending: B.Ending; parentUid: number | null };

export interface Observation {
  readonly events: readonly Ev[];
  /** What `onSpawn` saw: child uid, the hook's parent uid, and `child.parent.uid`. */
  readonly spawnHook: readonly { child: number; parent: number; childParent: number | null }[];
  readonly run: { ok: true; value: unknown } | { ok: false; error: unknown } | { hung: true };
  /** `task.status` of every task once `run` settled. */
  readonly statuses: ReadonlyMap<string, B.TaskStatus>;
  /** How many tasks had ended (exit hook) when `run` settled. */
  readonly exitsAtSettle: number;
}

// ---------------------------------------------------------------------------
// Checking

/** One suspending action of a task (yield, await, cancel) as it happened. */
interface Suspension {
  i: number;
  a: Exclude<Action, { t: "spawn" }>;
  begin: number;
  end: number;
  threw: boolean;
  value: unknown;
  error: unknown;
  status: B.TaskStatus | undefined;
}

interface TaskRun {
  path: string;
  node: Script;
  startIdx: number | null;
  kids: string[];
  cancelBegin: Map<number, number>;
  consumed: Set<number>;
  suspensions: Suspension[];
  /** The body reached its spin loop (which only a cancellation ends). */
  spun: boolean;
  /** The `finally` block ran to its end. */
  cleanupDone: boolean;
  bodyEnd: { idx: number; ok: boolean; value: unknown; error: unknown } | null;
}

const INF = Number.POSITIVE_INFINITY;

function parentOf(path: string): string | null {
  const i = path.lastIndexOf(".");
  return i < 0 ? null : path.slice(0, i);
}

function childIndex(path: string): number {
  return Number(path.slice(path.lastIndexOf(".") + 1));
}

function tagMatches(error: unknown, tag: ErrorTag): boolean {
  if (tag.kind === "cancelled") return error instanceof B.Cancelled;
  if (tag.kind === "script") return error instanceof ScriptError && error.path === tag.path;
  return error instanceof B.StillHasChildren;
}

function fmt(x: unknown): string {
  if (x instanceof Error) return `${x.name}(${x.message})`;
  return typeof x === "string" ? JSON.stringify(x) : String(x);
}

/** A compact rendering of the event log, for failure messages. */
export function showEvents(events: readonly Ev[]): string {
  return events
    .map((e, idx) => {
      const { k, ...rest } = e;
      const fields = Object.entries(rest)
        .filter(([, x]) => x !== undefined)
        .map(([name, x]) => `${name}=${fmt(x)}`)
        .join(" ");
      return `${idx}: ${k} ${fields}`;
    })
    .join("\n");
}

/** Checks an observed run against the program and the prediction; returns the violations. */
export function check(program: Script, pred: Prediction, obs: Observation): string[] {
  const out: string[] = [];
  const bad = (msg: string): void => void out.push(msg);
  if ("hung" in obs.run) {
    bad("the run did not settle (hang)");
    return out;
  }
  const events = obs.events;
  const nodes = new Map<string, Script>();
  walk(program, "0", (node, path) => nodes.set(path, node));

  // -- who is who --------------------------------------------------------------
  const uidOf = new Map<string, number>();
  const pathOf = new Map<number, string>();
  const spawnedAt = new Map<string, number>();
  const byPath = new Map<string, number[]>();
  events.forEach((e, idx) => {
    if (e.k === "exit") return;
    if (e.k === "spawned") {
      uidOf.set(e.child, e.uid);
      pathOf.set(e.uid, e.child);
      spawnedAt.set(e.child, idx);
    }
    if (e.k === "start" && e.path === "0") {
      uidOf.set("0", e.uid);
      pathOf.set(e.uid, "0");
    }
    let list = byPath.get(e.path);
    if (list === undefined) byPath.set(e.path, (list = []));
    list.push(idx);
  });
  const exitsByUid = new Map<number, number[]>();
  events.forEach((e, idx) => {
    if (e.k !== "exit") return;
    if (e.parentUid === null && !pathOf.has(e.uid)) {
      // The root exits without having started only if the run was cancelled first; not in these programs.
      uidOf.set("0", e.uid);
      pathOf.set(e.uid, "0");
    }
    let list = exitsByUid.get(e.uid);
    if (list === undefined) exitsByUid.set(e.uid, (list = []));
    list.push(idx);
  });
  for (const e of events) {
    if (e.k === "start" && e.uid !== uidOf.get(e.path))
      bad(`task ${e.path}: B.self() is uid ${e.uid}, spawn returned ${uidOf.get(e.path)}`);
  }
  const tasks = [...uidOf.keys()];
  if (!uidOf.has("0")) {
    bad("the root task neither started nor ended");
    return out;
  }

  // -- every task ends exactly once -------------------------------------------
  const exitIdx = new Map<string, number>();
  const ending = new Map<string, B.Ending>();
  for (const [uid, list] of exitsByUid) {
    const path = pathOf.get(uid);
    if (path === undefined) bad(`exit hook saw task ${uid}, which this program never spawned`);
    else if (list.length !== 1) bad(`task ${path} (uid ${uid}) ended ${list.length} times`);
    if (path !== undefined) {
      exitIdx.set(path, list[0]!);
      ending.set(path, (events[list[0]!] as Extract<Ev, { k: "exit" }>).ending);
      const parentUid = (events[list[0]!] as Extract<Ev, { k: "exit" }>).parentUid;
      const parentPath = parentOf(path);
      if (parentUid !== (parentPath === null ? null : (uidOf.get(parentPath) ?? -1))) {
        bad(`task ${path}'s parent at exit is uid ${parentUid}`);
      }
    }
  }
  for (const path of tasks) {
    if (!exitIdx.has(path)) bad(`task ${path} (uid ${uidOf.get(path)}) never ended`);
    if (!nodes.has(path)) bad(`task ${path} does not exist in the program`);
  }
  if (obs.exitsAtSettle !== tasks.length) bad(`run settled after ${obs.exitsAtSettle} of ${tasks.length} tasks had ended`);
  if (out.length !== 0) return out;
  const exitOf = (path: string): number => exitIdx.get(path) ?? INF;

  // -- the spawn hook saw the tree ---------------------------------------------
  for (const path of tasks) {
    if (path === "0") continue;
    const uid = uidOf.get(path)!;
    const parentUid = uidOf.get(parentOf(path)!)!;
    const hooks = obs.spawnHook.filter((h) => h.child === uid);
    if (hooks.length !== 1) bad(`spawn hook saw task ${path} ${hooks.length} times`);
    else if (hooks[0]!.parent !== parentUid || hooks[0]!.childParent !== parentUid) {
      bad(`spawn hook: task ${path} has parent ${hooks[0]!.parent}/${hooks[0]!.childParent}, expected ${parentUid}`);
    }
  }

  // -- ordering: subtree before parent, events before exit ----------------------
  for (const path of tasks) {
    const parent = parentOf(path);
    if (parent !== null && !(exitOf(path) < exitOf(parent))) bad(`task ${path} ended after its parent ${parent}`);
    const list = byPath.get(path) ?? [];
    if (list.length !== 0 && !(list[list.length - 1]! < exitOf(path))) bad(`task ${path} ran after it ended`);
  }

  // -- replay every task's script ---------------------------------------------
  const runs = new Map<string, TaskRun>();
  for (const path of tasks) runs.set(path, replay(path, nodes.get(path)!, byPath.get(path) ?? [], events, bad));
  if (out.length !== 0) return out;

  // -- steps are atomic; tasks start in spawn order, never eagerly ------------------
  for (const path of tasks) {
    const run = runs.get(path)!;
    const list = byPath.get(path) ?? [];
    for (let j = 0; j + 1 < list.length; j++) {
      const idx = list[j]!;
      if (!mayNotContinue(events[idx]!, idx, run, exitOf) && list[j + 1] !== idx + 1) {
        bad(`task ${path}'s step was interleaved after event ${idx} (${events[idx]!.k}): steps must run to their next suspension`);
      }
    }
  }
  const starts = tasks.filter((p) => p !== "0" && runs.get(p)!.startIdx !== null).sort((a, b) => spawnedAt.get(a)! - spawnedAt.get(b)!);
  for (let j = 0; j + 1 < starts.length; j++) {
    const a = starts[j]!;
    const b = starts[j + 1]!;
    if (byPath.get(a)![0]! > byPath.get(b)![0]!) bad(`task ${b} started before ${a}, which was spawned earlier (FIFO)`);
  }
  for (const p of starts) if (byPath.get(p)![0]! < spawnedAt.get(p)!) bad(`task ${p} started before its spawn returned`);

  // -- StillHasChildren ------------------------------------------------------
  const unconsumed = (run: TaskRun): string[] => run.kids.filter((_, k) => !run.consumed.has(k));
  const parentJust = (path: string): number => {
    const parent = parentOf(path);
    if (parent === null) return INF;
    const prun = runs.get(parent)!;
    return Math.min(prun.cancelBegin.get(childIndex(path)) ?? INF, prun.bodyEnd?.idx ?? INF);
  };
  const culprits = tasks
    .map((p) => runs.get(p)!)
    .filter((r) => r.bodyEnd?.ok && unconsumed(r).length !== 0 && parentJust(r.path) > r.bodyEnd.idx)
    .sort((a, b) => a.bodyEnd!.idx - b.bodyEnd!.idx);
  const fatal = culprits[0] ?? null;
  /** When a cancellation was requested for the task (its parent cancelled it, its parent's body ended, or the run failed). */
  const just = (path: string): number => (path === "0" ? (fatal === null ? INF : fatal.bodyEnd!.idx) : parentJust(path));

  // -- endings -----------------------------------------------------------------
  for (const path of tasks) {
    const run = runs.get(path)!;
    const j = just(path);
    const e = ending.get(path)!;
    if (run.startIdx !== null && j < run.startIdx) bad(`task ${path} started although it was cancelled before its first step (event ${j})`);
    if (j < exitOf(path)) {
      if (e !== "cancelled") bad(`task ${path} ended ${e}, expected cancelled (cancellation requested at event ${j})`);
      continue;
    }
    if (run.startIdx === null) bad(`task ${path} never started, yet nothing cancelled it`);
    else if (run.bodyEnd === null) bad(`task ${path} ended without its body ending`);
    else {
      const expected: B.Ending = run.bodyEnd.ok && unconsumed(run).length === 0 ? "resolved" : "failed";
      if (e !== expected) bad(`task ${path} ended ${e}, expected ${expected}`);
    }
  }

  // -- suspensions: where the cancellation lands, what awaits return, when cancel returns --
  const outcomeOf = (path: string): { ok: true; value: unknown } | { ok: false; match: (e: unknown) => boolean; what: string } => {
    const run = runs.get(path)!;
    switch (ending.get(path)!) {
      case "resolved":
        return { ok: true, value: run.bodyEnd!.value };
      case "cancelled":
        return { ok: false, match: (x) => x instanceof B.Cancelled, what: "Cancelled" };
      case "failed": {
        if (run.bodyEnd!.ok) {
          const uid = uidOf.get(path)!;
          return { ok: false, match: (x) => x instanceof B.StillHasChildren && x.task === uid, what: `StillHasChildren(${uid})` };
        }
        const error = run.bodyEnd!.error;
        return { ok: false, match: (x) => x === error, what: fmt(error) };
      }
    }
  };
  const seen = (s: Suspension): string =>
    s.threw
      ? `threw ${fmt(s.error)}`
      : `returned ${JSON.stringify(s.value, (_, x: unknown) => (x instanceof Error ? fmt(x) : x)) ?? "nothing"}`;
  for (const path of tasks) {
    const run = runs.get(path)!;
    const j = just(path);
    let delivered = false;
    for (const s of run.suspensions) {
      const a = s.a;
      const child = a.t === "yield" ? null : run.kids[a.k]!;
      const where = `task ${path}'s ${a.t}${a.t === "await" ? `(${a.mode})` : ""}${child === null ? "" : ` of ${child}`} (events ${s.begin}-${s.end})`;
      // A cancellation is thrown at the first suspension that resumes after it was
      // requested; a result that arrived before the request is not lost.
      const suspends = child === null || exitOf(child) > s.begin;
      const resumedBy = child === null ? s.end : exitOf(child);
      if (suspends && j < resumedBy) {
        delivered = true;
        if (!s.threw || !(s.error instanceof B.Cancelled))
          bad(`${where} should throw Cancelled (cancellation requested at event ${j}), ${seen(s)}`);
        continue;
      }
      if (a.t === "yield") {
        if (s.threw) bad(`${where} ${seen(s)}, but nothing cancelled it`);
      } else if (a.t === "cancel") {
        if (s.threw) bad(`${where} ${seen(s)}`);
        else if (s.status !== "cancelled") bad(`${where}: afterwards the child's status is ${s.status}`);
        for (const d of tasks) {
          if ((d === child || d.startsWith(`${child!}.`)) && !(exitOf(d) < s.end)) {
            bad(`${where} returned before descendant ${d} ended (event ${exitOf(d)})`);
          }
        }
      } else {
        const cancelledBefore = (run.cancelBegin.get(a.k) ?? INF) < s.begin;
        const expected = cancelledBefore
          ? { ok: false as const, match: (x: unknown) => x instanceof B.Cancelled, what: "Cancelled (cancelled by its parent)" }
          : outcomeOf(child!);
        let good: boolean;
        if (!(exitOf(child!) < s.end)) good = false;
        else if (a.mode === "task") {
          const r = s.value as B.Result<unknown> | undefined;
          good =
            !s.threw &&
            r !== undefined &&
            r.ok === expected.ok &&
            (r.ok ? expected.ok && r.value === expected.value : !expected.ok && expected.match(r.error));
        } else if (expected.ok) good = !s.threw && s.value === expected.value;
        else good = s.threw && expected.match(s.error);
        if (!good)
          bad(
            `${where} ${seen(s)}; expected ${expected.ok ? fmt(expected.value) : expected.what} (child ended at event ${exitOf(child!)})`,
          );
      }
    }
    if (run.bodyEnd === null) continue;
    if (run.spun) delivered = true;
    // Cancelled is delivered once: afterwards operations work normally, so cleanup completes.
    if (delivered) {
      if (!run.cleanupDone) bad(`task ${path}'s cleanup was interrupted after its cancellation had been delivered`);
    } else if (run.node.cleanup > 0) {
      const expectInterrupt = j < run.bodyEnd.idx;
      if (run.cleanupDone === expectInterrupt) {
        bad(
          `task ${path}'s cleanup ${run.cleanupDone ? "completed" : "was interrupted"}, cancellation requested at ${j === INF ? "no point" : `event ${j}`}`,
        );
      }
    } else if (!run.cleanupDone) bad(`task ${path}'s cleanup did not complete`);
  }

  // -- final statuses --------------------------------------------------------
  for (const path of tasks) {
    const parent = parentOf(path);
    const cancelledByParent = parent !== null && runs.get(parent)!.cancelBegin.has(childIndex(path));
    const expected = cancelledByParent ? "cancelled" : ending.get(path)!;
    const status = obs.statuses.get(path);
    if (status !== expected) bad(`task ${path}'s final status is ${status}, expected ${expected}`);
  }

  // -- how the run settled -----------------------------------------------------
  const result = obs.run as { ok: true; value: unknown } | { ok: false; error: unknown };
  if (fatal !== null) {
    const uid = uidOf.get(fatal.path)!;
    const kids = unconsumed(fatal)
      .map((p) => uidOf.get(p)!)
      .sort((a, b) => a - b);
    if (result.ok || !(result.error instanceof B.StillHasChildren)) {
      bad(
        `task ${fatal.path} returned with unconsumed children ${unconsumed(fatal).join(", ")}: run should reject with StillHasChildren, got ${result.ok ? `value ${fmt(result.value)}` : fmt(result.error)}`,
      );
    } else {
      const error = result.error;
      const named = [...error.children].sort((a, b) => a - b);
      if (error.task !== uid || named.join() !== kids.join()) {
        bad(`StillHasChildren names task ${error.task} [${named.join()}], expected ${uid} [${kids.join()}]`);
      }
    }
    for (const c of culprits) if (!pred.staticForgetters.has(c.path)) bad(`model: task ${c.path} forgot a child, but its script does not`);
  } else {
    const root = runs.get("0")!;
    if (result.ok) {
      if (ending.get("0") !== "resolved" || result.value !== root.bodyEnd?.value)
        bad(`run resolved with ${fmt(result.value)}, root ended ${ending.get("0")}`);
    } else if (result.error instanceof B.StillHasChildren) {
      bad(`run rejected with StillHasChildren (task ${result.error.task}) but no task returned with an unconsumed child`);
    } else if (ending.get("0") !== "failed" || result.error !== root.bodyEnd?.error) {
      bad(`run rejected with ${fmt(result.error)}, root ended ${ending.get("0")} with ${fmt(root.bodyEnd?.error)}`);
    }
  }

  // -- the interleaving-independent prediction ----------------------------------
  if (pred.detFatal && fatal === null) bad("model: a task of the deterministic region forgets a child, yet no StillHasChildren");
  if (pred.staticForgetters.size === 0 && fatal !== null) bad("model: no script forgets a child, yet StillHasChildren");
  if (fatal === null) {
    for (const [path, outcome] of pred.det) {
      const run = runs.get(path);
      if (run === undefined || run.bodyEnd === null) {
        bad(`model: task ${path} should have run to completion`);
        continue;
      }
      const e = ending.get(path)!;
      if (outcome.ok) {
        if (e !== "resolved" || run.bodyEnd.value !== outcome.value)
          bad(`model: task ${path} should resolve with ${outcome.value}, ended ${e}`);
      } else if (e !== "failed" || !tagMatches(run.bodyEnd.error, outcome.error)) {
        bad(`model: task ${path} should fail with ${JSON.stringify(outcome.error)}, ended ${e} with ${fmt(run.bodyEnd.error)}`);
      }
    }
    const r = pred.root;
    if (r.ok ? !(result.ok && result.value === r.value) : result.ok || !tagMatches(result.error, r.error)) {
      bad(
        `model: run should ${r.ok ? `resolve with ${r.value}` : `reject with ${JSON.stringify(r.error)}`}, got ${result.ok ? fmt(result.value) : fmt(result.error)}`,
      );
    }
  }
  for (const path of pred.neverStarts) {
    const run = runs.get(path);
    if (run === undefined) continue;
    if (run.startIdx !== null || ending.get(path) !== "cancelled")
      bad(
        `model: task ${path}, cancelled in the step that spawned it, should never start (started=${run.startIdx !== null}, ended ${ending.get(path)})`,
      );
  }
  return out;
}

/** Whether the event may end the task's step (a suspension or the end of its body). */
function mayNotContinue(e: Ev, idx: number, run: TaskRun, exitOf: (path: string) => number): boolean {
  switch (e.k) {
    case "bodyEnd":
    case "spin":
      return true;
    case "cleanupBegin":
      return run.node.cleanup > 0;
    case "begin": {
      const a = run.node.actions[e.i]!;
      if (a.t === "yield") return true;
      if (a.t === "spawn") return false;
      // Awaiting or cancelling an ended child does not suspend.
      return exitOf(run.kids[a.k]!) > idx;
    }
    default:
      return false;
  }
}

/**
 * Walks one task's events along its script and checks their shape: the
 * actions in order, each suspending one logged around the real operation, a
 * spin loop, the `finally` block, and what the body returned or threw.
 */
function replay(path: string, node: Script, list: readonly number[], events: readonly Ev[], bad: (msg: string) => void): TaskRun {
  const run: TaskRun = {
    path,
    node,
    startIdx: null,
    kids: [],
    cancelBegin: new Map(),
    consumed: new Set(),
    suspensions: [],
    spun: false,
    cleanupDone: false,
    bodyEnd: null,
  };
  if (list.length === 0) return run;
  let q = 0;
  const peek = (): Ev | undefined => (q < list.length ? events[list[q]!] : undefined);
  const take = <K extends Ev["k"]>(k: K, what: string): Extract<Ev, { k: K }> | null => {
    const e = peek();
    if (e === undefined || e.k !== k) {
      bad(`task ${path}: expected ${what}, got ${e === undefined ? "nothing" : `${e.k} (event ${list[q]})`}`);
      return null;
    }
    q++;
    return e as Extract<Ev, { k: K }>;
  };
  const at = (): number => list[q - 1]!;
  if (take("start", "start") === null) return run;
  run.startIdx = at();

  // How the body leaves its actions: normally, with an error (its own, or one an awaitExn threw).
  let leaving: { kind: "normal" } | { kind: "error"; error: unknown } | { kind: "script" } | { kind: "cancelled" } = { kind: "normal" };
  for (let i = 0; i < node.actions.length; i++) {
    const a = node.actions[i]!;
    if (a.t === "spawn") {
      const e = take("spawned", `spawn #${i}`);
      if (e === null) return run;
      if (e.i !== i || e.child !== `${path}.${run.kids.length}`) bad(`task ${path}: spawn #${i} logged as #${e.i} ${e.child}`);
      run.kids.push(e.child);
      continue;
    }
    const b = take("begin", `begin of action #${i} (${a.t})`);
    if (b === null) return run;
    const begin = at();
    const e = take("end", `end of action #${i} (${a.t})`);
    if (e === null) return run;
    if (b.i !== i || e.i !== i) bad(`task ${path}: action #${i} logged as #${b.i}/#${e.i}`);
    run.suspensions.push({ i, a, begin, end: at(), threw: e.threw, value: e.value, error: e.error, status: e.status });
    if (a.t === "cancel" && !run.cancelBegin.has(a.k)) run.cancelBegin.set(a.k, begin);
    if (a.t !== "yield" && (a.t === "cancel" || !e.threw || (a.mode === "catch" && e.error instanceof ScriptError))) {
      run.consumed.add(a.k);
    }
    if (!e.threw) continue;
    if (a.t === "await" && a.mode === "catch" && e.error instanceof ScriptError) continue;
    // A cancellation, or the awaited child's error: `check` tells which.
    leaving = a.t === "await" && a.mode !== "task" ? { kind: "error", error: e.error } : { kind: "cancelled" };
    break;
  }
  if (leaving.kind === "normal") {
    if (node.end === "throw") leaving = { kind: "script" };
    else if (node.end === "spin") {
      if (take("spin", "spin") === null) return run;
      run.spun = true;
      leaving = { kind: "cancelled" };
    }
  }
  if (take("cleanupBegin", "cleanup") === null) return run;
  if (peek()?.k === "cleanupEnd") {
    q++;
    run.cleanupDone = true;
  } else {
    if (node.cleanup === 0) bad(`task ${path}: a cleanup without yields did not complete`);
    leaving = { kind: "cancelled" };
  }
  const end = take("bodyEnd", "end of body");
  if (end === null) return run;
  run.bodyEnd = { idx: at(), ok: end.ok, value: end.value, error: end.error };
  switch (leaving.kind) {
    case "normal":
      if (!end.ok || end.value !== path)
        bad(`task ${path}: body should return ${path}, got ${end.ok ? fmt(end.value) : `error ${fmt(end.error)}`}`);
      break;
    case "script":
      if (end.ok || !(end.error instanceof ScriptError) || end.error.path !== path)
        bad(`task ${path}: body should throw its ScriptError, got ${end.ok ? fmt(end.value) : fmt(end.error)}`);
      break;
    case "error":
      if (end.ok || end.error !== leaving.error)
        bad(`task ${path}: body should fail with the error its awaitExn threw, ${fmt(leaving.error)}`);
      break;
    case "cancelled": {
      const last = run.suspensions[run.suspensions.length - 1];
      const thrown = run.cleanupDone && !run.spun && last?.threw ? last.error : undefined;
      if (end.ok || !(end.error instanceof B.Cancelled) || (thrown !== undefined && end.error !== thrown)) {
        bad(`task ${path}: an interrupted body should end with its Cancelled, got ${end.ok ? fmt(end.value) : fmt(end.error)}`);
      }
      break;
    }
  }
  if (q !== list.length) bad(`task ${path}: events after the end of its body (event ${list[q]})`);
  return run;
}
