/**
 * Replaying one task: walks its own events along its script and checks their
 * shape — the actions in order, each logged around the real operation, a
 * spin loop, the `finally` block, and what the body returned or threw.
 */
import * as B from "../../../src/index.js";
import { type Ev, fmt, type StepEv } from "./observation.js";
import { type Action, PROTECTED, type Script, ScriptError } from "./program.js";

/** One action of a task other than a spawn, as it happened. */
export interface Step {
  readonly i: number;
  readonly a: Exclude<Action, { t: "spawn" }>;
  readonly begin: number;
  /** The syscalls it made, in the order it made them. */
  readonly uids: readonly number[];
  /** What `care`/`take` answered. */
  readonly mid: { readonly idx: number; readonly took: string | null | undefined; readonly op: "await" | "cancel" | null } | null;
  /** `protect`'s `finally(cancelled)`. */
  readonly fin: { readonly idx: number; readonly cancelled: boolean } | null;
  readonly end: number;
  readonly threw: boolean;
  readonly value: unknown;
  readonly error: unknown;
  readonly status: B.TaskStatus | undefined;
}

export interface TaskRun {
  readonly path: string;
  readonly node: Script;
  startIdx: number | null;
  /** Its children's paths, in spawn order. */
  readonly kids: string[];
  /** Those spawned into its orphans collector. */
  readonly orphans: Set<string>;
  readonly steps: Step[];
  /** The body reached its spin loop (which only a cancellation ends). */
  spun: boolean;
  /** The `finally` block ran to its end. */
  cleanupDone: boolean;
  bodyEnd: { idx: number; ok: boolean; value: unknown; error: unknown } | null;
}

/** Whether a step's error is the awaited child's own (an awaitExn), rather than a cancellation. */
export function childErrorMayPropagate(a: Step["a"]): boolean {
  // A cancel (a take then cancel, an awaitFirst of its losers) throws what a child failed with while it was cancelled.
  return (a.t === "await" && a.mode !== "task") || a.t === "cancel" || a.t === "take" || (a.t === "join" && a.mode === "first");
}

/** Whether the body goes on after this step's error (a `catch` await swallows a child's ScriptError). */
function swallowed(a: Step["a"], error: unknown): boolean {
  return a.t === "await" && a.mode === "catch" && error instanceof ScriptError;
}

/** Whether the body went on after the step: it returned, or its error was swallowed. */
export function completed(s: Step): boolean {
  return !s.threw || swallowed(s.a, s.error);
}

export function replay(path: string, node: Script, list: readonly number[], events: readonly Ev[], bad: (msg: string) => void): TaskRun {
  const run: TaskRun = {
    path,
    node,
    startIdx: null,
    kids: [],
    orphans: new Set(),
    steps: [],
    spun: false,
    cleanupDone: false,
    bodyEnd: null,
  };
  if (list.length === 0) return run;
  let q = 0;
  const peek = (): Ev | undefined => (q < list.length ? events[list[q]!] : undefined);
  const take = <K extends StepEv["k"]>(k: K, what: string): Extract<StepEv, { k: K }> | null => {
    const e = peek();
    if (e === undefined || e.k !== k) {
      bad(`task ${path}: expected ${what}, got ${e === undefined ? "nothing" : `${e.k} (event ${list[q]})`}`);
      return null;
    }
    q++;
    return e as Extract<StepEv, { k: K }>;
  };
  const at = (): number => list[q - 1]!;
  if (take("start", "start") === null) return run;
  run.startIdx = at();

  // How the body leaves its actions: normally, with an error an awaitExn threw, its own error, or cancelled.
  let leaving: { kind: "normal" } | { kind: "error"; error: unknown } | { kind: "script" } | { kind: "cancelled" } = { kind: "normal" };
  for (let i = 0; i < node.actions.length; i++) {
    const a = node.actions[i]!;
    if (a.t === "spawn") {
      const e = take("spawned", `spawn #${i}`);
      if (e === null) return run;
      const child = `${path}.${run.kids.length}`;
      if (e.i !== i || e.child !== child || e.orphan !== a.orphan) bad(`task ${path}: spawn #${i} logged as #${e.i} ${e.child}`);
      run.kids.push(child);
      if (a.orphan) run.orphans.add(child);
      continue;
    }
    const b = take("begin", `begin of action #${i} (${a.t})`);
    if (b === null) return run;
    const begin = at();
    let mid: Step["mid"] = null;
    if (a.t === "care" || a.t === "take") {
      const m = take("mid", `what ${a.t} #${i} answered`);
      if (m === null) return run;
      mid = { idx: at(), took: m.took, op: m.op };
    }
    let fin: Step["fin"] = null;
    if (a.t === "protect") {
      const f = take("protectFinally", `protect #${i}'s finally`);
      if (f === null) return run;
      fin = { idx: at(), cancelled: f.cancelled };
    }
    const e = take("end", `end of action #${i} (${a.t})`);
    if (e === null) return run;
    if (b.i !== i || e.i !== i) bad(`task ${path}: action #${i} logged as #${b.i}/#${e.i}`);
    run.steps.push({
      i,
      a,
      begin,
      uids: b.uids ?? [],
      mid,
      fin,
      end: at(),
      threw: e.threw,
      value: e.value,
      error: e.error,
      status: e.status,
    });
    if (!e.threw) {
      if (a.t === "protect" && e.value !== PROTECTED) bad(`task ${path}: protect #${i} returned ${fmt(e.value)}`);
      continue;
    }
    if (swallowed(a, e.error)) continue;
    // The awaited child's error, or a cancellation: `check` tells which.
    leaving = childErrorMayPropagate(a) ? { kind: "error", error: e.error } : { kind: "cancelled" };
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
      const last = run.steps[run.steps.length - 1];
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
