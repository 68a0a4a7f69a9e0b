/**
 * A reference model of Bobbin's task tree for the property test
 * (`test/property.test.ts`), with Miou's rules:
 * - `model/program.ts`: the programs (task scripts) and how raw ones are made valid;
 * - `model/predict.ts`: what a program does whatever the interleaving;
 * - `model/observation.ts`: what a run records;
 * - `model/replay.ts`: the shape of each task's events along its script;
 * - `model/steps.ts`: what each step means (suspension, wake-up, result, consumption);
 * - this file: `check`, which holds an observed run to every rule that must hold
 *   whatever the interleaving:
 *   - every task ends exactly once, after its whole subtree, before `run` settles;
 *   - steps are atomic, and (without a scheduling policy) tasks start in spawn order;
 *   - a task ends `cancelled` exactly when a cancellation reached it before its body
 *     ended (its parent's cancel or take-then-cancel, an awaitFirst it lost, its
 *     parent's body ending, the run failing) and its body returned or let a
 *     `Cancelled` through, and nothing of its subtree failed while it ended; a body
 *     that throws anything else fails with it, cancelled or not, and the errors of
 *     the children that fail while it ends follow its own (no error is lost); the
 *     kernel requests each cancellation at that very step;
 *   - a cancellation is delivered at the first suspension that would resume after
 *     it was requested; a result already on its way is not lost;
 *   - every step returns what Miou's semantics say (awaits, joins, triggers,
 *     syscalls, care / take / get / drain, protect's handlers);
 *   - a cancelled syscall is reported exactly once to `select`;
 *   - `StillHasChildren` happens exactly when a task returned normally (not
 *     cancelled) with an unconsumed child, and names it and those children;
 *     a throwing `onCancellation` fails the run with `CallbackFailed`.
 */
import * as B from "../../src/index.js";
import type * as L from "../../src/lowlevel/index.js";
import { cancellationTimes, parentOf } from "./model/cancellations.js";
import { type Coverage, coverage } from "./model/coverage.js";
import { type Ev, fmt, isStepEvent, type Observation, type StepEv } from "./model/observation.js";
import type { Outcome, Prediction } from "./model/predict.js";
import { type Script, ScriptError, walk } from "./model/program.js";
import { replay, type TaskRun } from "./model/replay.js";
import {
  type Atom,
  analyse,
  CANCELLED,
  type Expected,
  errorsOf,
  failedWith,
  INF,
  type Judge,
  type StepModel,
  type TaskModel,
  type World,
} from "./model/steps.js";

export type { Coverage } from "./model/coverage.js";
export type { Ev, Observation } from "./model/observation.js";
export { showEvents } from "./model/observation.js";
export { type Prediction, predict } from "./model/predict.js";
export * from "./model/program.js";

export interface Verdict {
  readonly violations: string[];
  readonly reached: Set<Coverage>;
}

function tagMatches(error: unknown, tag: Extract<Outcome, { ok: false }>["error"]): boolean {
  if (tag.kind === "cancelled") return error instanceof B.Cancelled;
  if (tag.kind === "script") return error instanceof ScriptError && error.path === tag.path;
  return error instanceof B.StillHasChildren;
}

/** Checks an observed run against the program and the prediction. */
export function check(program: Script, pred: Prediction, obs: Observation): Verdict {
  const out: string[] = [];
  const reached = new Set<Coverage>();
  const bad = (msg: string): void => void out.push(msg);
  const verdict: Verdict = { violations: out, reached };
  if ("hung" in obs.run) {
    bad("the run did not settle (hang)");
    return verdict;
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
    if (!isStepEvent(e)) return;
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
  const byUid = (k: "exit" | "cancelRequest"): Map<number, number[]> => {
    const m = new Map<number, number[]>();
    events.forEach((e, idx) => {
      if (e.k !== k) return;
      let list = m.get(e.uid);
      if (list === undefined) m.set(e.uid, (list = []));
      list.push(idx);
    });
    return m;
  };
  const exitsByUid = byUid("exit");
  for (const e of events) {
    if (e.k === "start" && e.uid !== uidOf.get(e.path))
      bad(`task ${e.path}: B.self() is uid ${e.uid}, spawn returned ${uidOf.get(e.path)}`);
  }
  const tasks = [...uidOf.keys()];
  if (!uidOf.has("0")) {
    bad("the root task never started");
    return verdict;
  }

  // -- every task ends exactly once -------------------------------------------
  const exitIdx = new Map<string, number>();
  const ending = new Map<string, L.Ending>();
  for (const [uid, list] of exitsByUid) {
    const path = pathOf.get(uid);
    if (path === undefined) {
      bad(`exit hook saw task ${uid}, which this program never spawned`);
      continue;
    }
    if (list.length !== 1) bad(`task ${path} (uid ${uid}) ended ${list.length} times`);
    const exit = events[list[0]!] as Extract<Ev, { k: "exit" }>;
    exitIdx.set(path, list[0]!);
    ending.set(path, exit.ending);
    const parentPath = parentOf(path);
    if (exit.parentUid !== (parentPath === null ? null : (uidOf.get(parentPath) ?? -1)))
      bad(`task ${path}'s parent at exit is uid ${exit.parentUid}`);
  }
  for (const path of tasks) {
    if (!exitIdx.has(path)) bad(`task ${path} (uid ${uidOf.get(path)}) never ended`);
    if (!nodes.has(path)) bad(`task ${path} does not exist in the program`);
  }
  if (obs.exitsAtSettle !== tasks.length) bad(`run settled after ${obs.exitsAtSettle} of ${tasks.length} tasks had ended`);
  if (obs.finalised !== 1) bad(`the events backend was finalised ${obs.finalised} times`);
  if (out.length !== 0) return verdict;
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
  if (out.length !== 0) return verdict;

  // -- what every step means ------------------------------------------------------
  const firedAt = new Map<number, number>();
  const firedWith = new Map<number, number[]>();
  const reports = new Map<number, number[]>();
  events.forEach((e, idx) => {
    if (e.k !== "select") return;
    for (const uid of e.fired) {
      if (firedAt.has(uid)) continue;
      firedAt.set(uid, idx);
      firedWith.set(uid, e.fired);
    }
    for (const uid of e.cancelled) {
      let list = reports.get(uid);
      if (list === undefined) reports.set(uid, (list = []));
      list.push(idx);
    }
  });
  const world: World = {
    runs,
    exitOf,
    uidOf: (path) => uidOf.get(path),
    firedAt: (uid) => firedAt.get(uid) ?? INF,
    firedWith: (uid) => firedWith.get(uid) ?? [],
    signalsOf(path) {
      const parent = parentOf(path);
      if (parent === null) return [];
      const prun = runs.get(parent)!;
      return prun.steps.filter((s) => s.a.t === "signal" && prun.kids[s.a.k] === path).map((s) => s.begin);
    },
    statusOf: (path) => obs.statuses.get(path),
  };
  const models = new Map<string, TaskModel>();
  for (const path of tasks) models.set(path, analyse(world, runs.get(path)!));

  // -- steps are atomic; tasks start in spawn order, never eagerly ------------------
  const stepAt = new Map<number, StepModel>();
  for (const model of models.values()) {
    for (const m of model.steps) {
      stepAt.set(m.step.begin, m);
      if (m.step.mid !== null) stepAt.set(m.step.mid.idx, m);
    }
  }
  for (const path of tasks) {
    const run = runs.get(path)!;
    const list = byPath.get(path) ?? [];
    for (let n = 0; n + 1 < list.length; n++) {
      const idx = list[n]!;
      if (!mayStop(events[idx] as StepEv, run, stepAt.get(idx)) && list[n + 1] !== idx + 1) {
        bad(`task ${path}'s step was interleaved after event ${idx} (${events[idx]!.k}): steps must run to their next suspension`);
      }
    }
  }
  const starts = tasks.filter((p) => p !== "0" && runs.get(p)!.startIdx !== null).sort((a, b) => spawnedAt.get(a)! - spawnedAt.get(b)!);
  if (obs.fifo) {
    for (let n = 0; n + 1 < starts.length; n++) {
      const a = starts[n]!;
      const b = starts[n + 1]!;
      if (runs.get(a)!.startIdx! > runs.get(b)!.startIdx!) bad(`task ${b} started before ${a}, which was spawned earlier (FIFO)`);
    }
  }
  for (const p of starts) if (runs.get(p)!.startIdx! < spawnedAt.get(p)!) bad(`task ${p} started before its spawn returned`);

  // -- when each task's cancellation was requested --------------------------------
  const unconsumed = (run: TaskRun): string[] => run.kids.filter((kid) => !models.get(run.path)!.consumed.has(kid));
  // The first broken rule fails the run: a task returning with an unconsumed child, or a throwing
  // onCancellation. What the failure changes happens after it, so the culprits before it stand.
  const unfailed = cancellationTimes(runs, models, INF);
  const culprits = tasks
    .map((p) => runs.get(p)!)
    .filter((r) => r.bodyEnd?.ok && unconsumed(r).length !== 0 && unfailed.j(r.path) > r.bodyEnd.idx)
    .sort((a, b) => a.bodyEnd!.idx - b.bodyEnd!.idx);
  const handlerFailure = events.findIndex((e) => e.k === "onCancellation" && e.error !== undefined);
  const culprit = culprits[0] ?? null;
  const fatal =
    culprit !== null && (handlerFailure < 0 || culprit.bodyEnd!.idx < handlerFailure)
      ? { kind: "stillHasChildren" as const, idx: culprit.bodyEnd!.idx, run: culprit }
      : handlerFailure >= 0
        ? {
            kind: "callbackFailed" as const,
            idx: handlerFailure,
            error: (events[handlerFailure] as Extract<Ev, { k: "onCancellation" }>).error,
          }
        : null;
  const { j: just, cancelledAt } = cancellationTimes(runs, models, fatal?.idx ?? INF);

  /** Whether the task's body ended as a cancelled body does: it returned, or let a Cancelled through, once cancelled. */
  const bodyCancelled = (run: TaskRun): boolean =>
    run.bodyEnd !== null && just(run.path) < run.bodyEnd.idx && (run.bodyEnd.ok || run.bodyEnd.error instanceof B.Cancelled);
  /** Its children that failed while it ended (after its body), in the order they ended: their errors join its outcome. */
  const failedWhileEnding = (run: TaskRun): string[] =>
    run.bodyEnd === null
      ? []
      : run.kids.filter((kid) => exitOf(kid) > run.bodyEnd!.idx && ending.get(kid) === "failed").sort((a, b) => exitOf(a) - exitOf(b));
  /** The errors a failed task's outcome holds, in order, each as a matcher (see `Failures`). */
  const failuresOf = (path: string): Atom[] => {
    const run = runs.get(path)!;
    const uid = uidOf.get(path)!;
    if (run.bodyEnd!.ok && !bodyCancelled(run))
      return [{ match: (x) => x instanceof B.StillHasChildren && x.task === uid, what: `StillHasChildren(${uid})` }];
    const own: Atom[] =
      run.bodyEnd!.ok || bodyCancelled(run)
        ? []
        : errorsOf(run.bodyEnd!.error).map((error) => ({ match: (x) => x === error, what: fmt(error), error }));
    return [...own, ...failedWhileEnding(run).flatMap(failuresOf)];
  };
  const outcomeOf = (path: string): Expected => {
    const run = runs.get(path)!;
    switch (ending.get(path)!) {
      case "resolved":
        return { ok: true, value: run.bodyEnd!.value };
      case "cancelled":
        return CANCELLED;
      case "failed":
        return failedWith(failuresOf(path));
    }
  };
  const judge: Judge = {
    j: just,
    cancelledAt,
    // Cancelling a task that had ended replaces its outcome (Miou); one still running keeps what it ends with.
    expected: (path, at) => (cancelledAt(path) < at && exitOf(path) < cancelledAt(path) ? CANCELLED : outcomeOf(path)),
    failuresOf,
    stepsOf: (path) => models.get(path)?.steps ?? [],
    subtree: (path) => tasks.filter((d) => d === path || d.startsWith(`${path}.`)),
  };

  // -- endings -----------------------------------------------------------------
  for (const path of tasks) {
    const run = runs.get(path)!;
    const j = just(path);
    const e = ending.get(path)!;
    if (run.startIdx !== null && j < run.startIdx) bad(`task ${path} started although it was cancelled before its first step (event ${j})`);
    if (run.startIdx === null) {
      if (!(j < exitOf(path))) bad(`task ${path} never started, yet nothing cancelled it`);
      else if (e !== "cancelled")
        bad(`task ${path} ended ${e}, expected cancelled (cancellation requested at event ${j}, before its first step)`);
    } else if (run.bodyEnd === null) bad(`task ${path} ended without its body ending`);
    else {
      const failed = failedWhileEnding(run);
      const own: L.Ending = bodyCancelled(run) ? "cancelled" : run.bodyEnd.ok && unconsumed(run).length === 0 ? "resolved" : "failed";
      const expected: L.Ending = failed.length !== 0 ? "failed" : own;
      if (e !== expected)
        bad(
          `task ${path} ended ${e}, expected ${expected} (cancellation requested at ${j === INF ? "no point" : `event ${j}`}${failed.length === 0 ? "" : `; ${failed.join(", ")} failed while it ended`})`,
        );
    }
  }

  // -- the kernel requests each cancellation in the step that causes it -------------------
  const requests = byUid("cancelRequest");
  const requestOf = (path: string): number[] => requests.get(uidOf.get(path)!) ?? [];
  for (const [uid] of requests) if (!pathOf.has(uid)) bad(`a cancellation was requested for task ${uid}, which this program never spawned`);
  for (const path of tasks) {
    const j = just(path);
    const list = requestOf(path);
    if (!(j < exitOf(path))) {
      if (list.length !== 0)
        bad(`task ${path}'s cancellation was requested at event ${list[0]} with no reason (it ended at event ${exitOf(path)})`);
      continue;
    }
    if (list.length !== 1) {
      bad(`task ${path}'s cancellation was requested ${list.length} times, expected once (at event ${j})`);
      continue;
    }
    const r = list[0]!;
    const between = events.slice(j + 1, r).findIndex((e) => e.k !== "cancelRequest" && e.k !== "onCancellation");
    if (!(j < r) || between >= 0)
      bad(`task ${path}'s cancellation was requested at event ${r}, not in the step of event ${j} that caused it`);
  }

  // -- protect: onCancellation at once, then finally(cancelled) ----------------------------
  const handlerRuns = new Map<string, number[]>();
  events.forEach((e, idx) => {
    if (e.k !== "onCancellation") return;
    const list = handlerRuns.get(e.owner);
    if (list === undefined) handlerRuns.set(e.owner, [idx]);
    else list.push(idx);
  });
  for (const path of tasks) {
    const j = just(path);
    const protects = models.get(path)!.steps.filter((m) => m.step.a.t === "protect" && m.step.fin !== null);
    const expected = protects.filter((m) => m.step.begin < j && j < m.step.fin!.idx).length;
    const got = handlerRuns.get(path) ?? [];
    if (got.length !== expected)
      bad(`task ${path}'s onCancellation ran ${got.length} times, expected ${expected} (cancellation requested at event ${j})`);
    else if (expected === 1 && got[0] !== requestOf(path)[0]! + 1)
      bad(`task ${path}'s onCancellation ran at event ${got[0]}, not as its cancellation was requested`);
    for (const m of protects) {
      const fin = m.step.fin!;
      if (fin.cancelled !== j < fin.idx)
        bad(`task ${path}'s protect #${m.step.i} ran finally(${fin.cancelled}) at event ${fin.idx}, cancellation requested at event ${j}`);
    }
  }

  // -- steps: where the cancellation lands, what they return ---------------------------
  for (const path of tasks) {
    const run = runs.get(path)!;
    const j = just(path);
    let delivered = false;
    for (const m of models.get(path)!.steps) {
      const s = m.step;
      const a = s.a;
      const where = `task ${path}'s #${s.i} ${a.t}${a.t === "await" ? `(${a.mode})` : ""}${"k" in a ? ` of ${run.kids[a.k]}` : ""} (events ${s.begin}-${s.end})`;
      if (m.ownRule !== undefined) {
        const wrong = m.ownRule(judge, j);
        if (wrong !== null) bad(`${where} ${wrong}`);
        if (s.threw) delivered = true;
        continue;
      }
      if (m.suspends && j < m.resumedBy) {
        delivered = true;
        if (!s.threw || !(s.error instanceof B.Cancelled)) {
          bad(`${where} should throw Cancelled (cancellation requested at event ${j}), ${s.threw ? `threw ${fmt(s.error)}` : "returned"}`);
        }
        continue;
      }
      const wrong = m.verify(judge);
      if (wrong !== null) bad(`${where} ${wrong}`);
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

  // -- cancellation work runs ahead of ordinary steps ------------------------------------
  // A task parked when its cancellation is requested (or that parks once it was) is queued ahead
  // of ordinary work: until it has run, no other task starts a step, unless it is such a task too.
  const becomesUrgent = new Map<number, string[]>();
  const maybeUrgent = new Set<string>();
  for (const path of tasks) {
    const j = just(path);
    for (const m of models.get(path)!.steps) {
      const s = m.step;
      if (!m.suspends || s.a.t === "yield" || s.a.t === "protect") continue; // these queue the task again, they do not park it
      if (s.a.t === "drain") {
        if (s.threw) maybeUrgent.add(path); // which of its inner gets was cancelled is not logged
        continue;
      }
      const parkedAt = s.mid?.idx ?? s.begin;
      const at = j < parkedAt ? parkedAt : j < m.resumedBy ? j : INF;
      if (at !== INF) becomesUrgent.set(at, [...(becomesUrgent.get(at) ?? []), path]);
    }
  }
  const urgent = new Map<string, number>();
  const lastEvent = new Map<string, number>();
  events.forEach((e, idx) => {
    if (isStepEvent(e)) {
      const previous = lastEvent.get(e.path);
      lastEvent.set(e.path, idx);
      const since = urgent.get(e.path);
      if (since !== undefined && since < idx) urgent.delete(e.path);
      else if (
        urgent.size !== 0 &&
        !maybeUrgent.has(e.path) &&
        (previous === undefined || mayStop(events[previous] as StepEv, runs.get(e.path)!, stepAt.get(previous)))
      ) {
        const [waiting, since] = [...urgent][0]!;
        bad(`task ${e.path} started a step at event ${idx} while ${waiting}'s cancellation (event ${since}) waited to be delivered`);
      }
    }
    for (const path of becomesUrgent.get(idx) ?? []) urgent.set(path, idx);
  });

  // -- a cancelled syscall is reported to select exactly once ------------------------------
  const known = new Set<number>();
  for (const path of tasks) {
    const j = just(path);
    for (const m of models.get(path)!.steps) {
      for (const uid of m.step.uids) known.add(uid);
      for (const uid of m.step.uids) {
        const cancelled = uid === m.parkedOn && m.suspends && j < m.resumedBy;
        const list = reports.get(uid) ?? [];
        if (list.length !== (cancelled ? 1 : 0))
          bad(`task ${path}'s syscall ${uid} was reported cancelled ${list.length} times, expected ${cancelled ? 1 : 0}`);
        else if (cancelled && !(list[0]! > j))
          bad(`task ${path}'s syscall ${uid} was reported cancelled at event ${list[0]}, before its cancellation`);
      }
    }
  }
  for (const uid of reports.keys()) if (!known.has(uid)) bad(`select was told syscall ${uid} was cancelled, which no task made`);

  // -- final statuses --------------------------------------------------------
  for (const path of tasks) {
    const expected = cancelledAt(path) < INF && exitOf(path) < cancelledAt(path) ? "cancelled" : ending.get(path)!;
    const status = obs.statuses.get(path);
    if (status !== expected) bad(`task ${path}'s final status is ${status}, expected ${expected}`);
  }

  // -- how the run settled -----------------------------------------------------
  // The error that failed it first, then the root's own failures (none lost, none twice).
  const result = obs.run as { ok: true; value: unknown } | { ok: false; error: unknown };
  // Every broken rule is kept, in order: the first, then those broken while the tree was being cancelled.
  const rootFailures = ending.get("0") === "failed" ? failuresOf("0") : [];
  const broken: [number, Atom][] = [];
  if (fatal !== null) {
    for (const r of tasks.map((p) => runs.get(p)!)) {
      // (The first culprit's own request is at its body's end: the failure it caused.)
      if (!r.bodyEnd?.ok || unconsumed(r).length === 0 || just(r.path) < r.bodyEnd.idx) continue;
      const uid = uidOf.get(r.path)!;
      broken.push([r.bodyEnd.idx, { match: (x) => x instanceof B.StillHasChildren && x.task === uid, what: `StillHasChildren(${uid})` }]);
    }
    events.forEach((e, idx) => {
      if (e.k !== "onCancellation" || e.error === undefined) return;
      const error = e.error;
      broken.push([idx, { match: (x) => x instanceof B.CallbackFailed && x.cause === error, what: `CallbackFailed(${fmt(error)})` }]);
    });
  }
  const first = broken.sort((a, b) => a[0] - b[0]).map(([, atom]) => atom);
  // The root may fail with one of those errors itself (it awaited the task that broke the rule): it is listed once.
  const listed = (a: Atom): boolean => first.some((f) => ("error" in a ? f.match(a.error) : f.what === a.what));
  const runFailures = [...first, ...rootFailures.filter((a) => !listed(a))];
  if (runFailures.length === 0) {
    if (!result.ok) bad(`run rejected with ${fmt(result.error)}, root ended ${ending.get("0")}`);
    else if (ending.get("0") !== "resolved" || result.value !== runs.get("0")!.bodyEnd?.value)
      bad(`run resolved with ${fmt(result.value)}, root ended ${ending.get("0")}`);
  } else {
    const expected = failedWith(runFailures);
    if (result.ok || !expected.match(result.error))
      bad(`run should reject with ${expected.what}, got ${result.ok ? `value ${fmt(result.value)}` : fmt(result.error)}`);
    else if (fatal?.kind === "stillHasChildren") {
      const error = errorsOf(result.error)[0] as B.StillHasChildren;
      const uid = uidOf.get(fatal.run.path)!;
      const kids = unconsumed(fatal.run)
        .map((p) => uidOf.get(p)!)
        .sort((a, b) => a - b);
      const named = [...error.children].sort((a, b) => a - b);
      if (error.task !== uid || named.join() !== kids.join())
        bad(`StillHasChildren names task ${error.task} [${named.join()}], expected ${uid} [${kids.join()}]`);
    }
  }
  for (const c of culprits) if (!pred.staticForgetters.has(c.path)) bad(`model: task ${c.path} forgot a child, but its script may not`);

  // -- the interleaving-independent prediction ----------------------------------
  if (pred.detFatal && fatal === null) bad("model: a task of the deterministic region forgets a child, yet no StillHasChildren");
  if (pred.staticForgetters.size === 0 && culprit !== null) bad("model: no script forgets a child, yet StillHasChildren");
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
    if (r !== null && (r.ok ? !(result.ok && result.value === r.value) : result.ok || !tagMatches(result.error, r.error))) {
      bad(
        `model: run should ${r.ok ? `resolve with ${r.value}` : `reject with ${JSON.stringify(r.error)}`}, got ${result.ok ? fmt(result.value) : fmt(result.error)}`,
      );
    }
  }
  for (const path of pred.neverStarts) {
    const run = runs.get(path);
    if (run === undefined) continue;
    if (run.startIdx !== null || ending.get(path) !== "cancelled") {
      bad(
        `model: task ${path}, cancelled in the step that spawned it, should never start (started=${run.startIdx !== null}, ended ${ending.get(path)})`,
      );
    }
  }

  // -- what the run exercised ---------------------------------------------------------
  for (const tag of coverage({
    tasks,
    runs,
    models,
    exitOf,
    just,
    cancelledAt,
    reports,
    handlerRuns,
    result,
    fatal: fatal?.kind ?? null,
  })) {
    reached.add(tag);
  }
  return verdict;
}

/** Whether the task may stop right after event `e` (a suspension, or the end of its body). */
function mayStop(e: StepEv, run: TaskRun, step: StepModel | undefined): boolean {
  switch (e.k) {
    case "bodyEnd":
    case "spin":
      return true;
    case "cleanupBegin":
      return run.node.cleanup > 0;
    case "begin": {
      const a = step!.step.a;
      if (a.t === "care" || a.t === "take") return false; // they answer at once
      if (a.t === "protect") return a.yields > 0;
      return step!.suspends;
    }
    case "mid":
      return step!.suspends;
    default:
      return false;
  }
}
