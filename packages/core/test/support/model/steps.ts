/**
 * What each step of a task means, in Miou's terms: whether it suspends, what
 * would wake it, what it must return, which children it consumes and which it
 * cancels (and when). Computed from the program and the times things ended
 * (exits, signals, `select`s), never from what the step itself returned.
 *
 * A cancellation requested before a suspending step is woken is delivered
 * there (`Cancelled`); otherwise the step completes and `verify` checks its
 * result.
 */
import * as B from "../../../src/index.js";
import { fmt } from "./observation.js";
import { completed, type Step, type TaskRun } from "./replay.js";

export const INF = Number.POSITIVE_INFINITY;

/** What the analysis needs to know of the run (all observations). */
export interface World {
  readonly runs: ReadonlyMap<string, TaskRun>;
  exitOf(path: string): number;
  uidOf(path: string): number | undefined;
  /** The first `select` that returned the syscall's signal, or INF. */
  firedAt(uid: number): number;
  /** The select that did, with what else it fired. */
  firedWith(uid: number): readonly number[];
  /** When the task's trigger was signalled (the `begin` of its parent's signal steps). */
  signalsOf(path: string): readonly number[];
  /** `task.status` once the run settled. */
  statusOf(path: string): B.TaskStatus | undefined;
}

/** What verifying a step needs: the model's cancellation times and outcomes. */
export interface Judge {
  /** When a cancellation was requested for the task (INF: never). */
  j(path: string): number;
  /** When its parent cancelled it (a cancel, a take then cancel, an awaitFirst it lost), or INF. */
  cancelledAt(path: string): number;
  /** The outcome the parent sees when it takes the task's result at event `at`. */
  expected(path: string, at: number): Expected;
  /** The errors of a task that failed, in order. */
  failuresOf(path: string): readonly Atom[];
  /** The step models of a task (for a signal: its child's waits). */
  stepsOf(path: string): readonly StepModel[];
  /** The task and every task under it. */
  subtree(path: string): readonly string[];
}

export type Expected =
  | { ok: true; value: unknown }
  | { ok: false; match: (e: unknown) => boolean; what: string; readonly cancelled?: true };

/** One error of a failed outcome: a given error (`error`), or one of a kind. */
export interface Atom {
  match(e: unknown): boolean;
  readonly what: string;
  readonly error?: unknown;
}

/** The outcome of a task that ended cancelled (or whose ended outcome a cancel replaced). */
export const CANCELLED: Expected = { ok: false, match: (x) => x instanceof B.Cancelled, what: "Cancelled", cancelled: true };

/** The errors an outcome reports, as the kernel flattens them (`B.Failures` for several). */
export function errorsOf(error: unknown): readonly unknown[] {
  return error instanceof B.Failures ? error.errors : [error];
}

/** A failed outcome with these errors, in order: one is the error itself, several a `Failures`. */
export function failedWith(atoms: readonly Atom[]): Extract<Expected, { ok: false }> {
  return {
    ok: false,
    match: (x) => {
      const errors = errorsOf(x);
      return errors.length === atoms.length && atoms.every((atom, i) => atom.match(errors[i]));
    },
    what: atoms.length === 1 ? atoms[0]!.what : `Failures(${atoms.map((a) => a.what).join(", ")})`,
  };
}

/** A cancellation of a child by its parent: at `at`, provided the parent's own cancellation came after `unlessParentBy`. */
export interface CancelPoint {
  readonly by: "cancel" | "take" | "awaitFirst";
  readonly at: number;
  readonly unlessParentBy?: number;
}

export interface StepModel {
  readonly step: Step;
  /** Whether the task stops in this step (after `begin`, or after `mid` for take). */
  readonly suspends: boolean;
  /** When what it waits for happens (INF: never); a cancellation requested before is delivered here. */
  readonly resumedBy: number;
  /** The syscall the task parks on, if any. */
  readonly parkedOn: number | null;
  /** Checks what a step that completed returned; returns what is wrong, or null. */
  verify(judge: Judge): string | null;
  /** A step with its own cancellation rule (drain): returns what is wrong, or null. */
  readonly ownRule?: (judge: Judge, j: number) => string | null;
}

/** What one task's steps mean, and what they do to its children. */
export interface TaskModel {
  readonly steps: StepModel[];
  /** Children (by path) consumed by steps that completed. */
  readonly consumed: Set<string>;
  /** Cancellations of each child by this task. */
  readonly cancels: Map<string, CancelPoint[]>;
}

function isResult(x: unknown): x is B.Result<unknown> {
  return x !== null && typeof x === "object" && "ok" in x;
}

/** Whether a Result is the expected outcome. */
export function resultIs(r: unknown, e: Expected): boolean {
  if (!isResult(r) || r.ok !== e.ok) return false;
  return r.ok ? e.ok && r.value === e.value : !e.ok && e.match(r.error);
}

/** Which of `candidates` a Result came from: its value is a path, its error a task's own. */
function identify(world: World, r: unknown, candidates: readonly string[]): string | undefined {
  if (!isResult(r)) return undefined;
  if (r.ok) return candidates.find((p) => p === r.value);
  const error = r.error;
  const first = errorsOf(error)[0];
  if (first instanceof B.StillHasChildren) return candidates.find((p) => world.uidOf(p) === first.task);
  return candidates.find((p) => {
    const end = world.runs.get(p)?.bodyEnd;
    return end != null && !end.ok && errorsOf(end.error)[0] === first;
  });
}

const seen = (s: Step): string =>
  s.threw ? `threw ${fmt(s.error)}` : `returned ${s.value === undefined ? (s.status ?? "nothing") : fmt(s.value)}`;

/** Checks a step that picked one of several ended tasks at random, preferring one that succeeded. */
function checkRandomPick(judge: Judge, s: Step, at: number, pool: readonly string[], chosen: string | undefined): string | null {
  if (chosen === undefined) return `returned ${fmt(s.value)}, the result of none of ${pool.join(", ")}`;
  const succeeded = pool.filter((p) => judge.expected(p, at).ok);
  if (succeeded.length !== 0 && !succeeded.includes(chosen)) return `picked ${chosen}, which failed, over ${succeeded.join(", ")}`;
  return null;
}

/** Checks that a completed step returned the expected Result of `path`. */
function checkResult(judge: Judge, s: Step, path: string, at: number): string | null {
  const e = judge.expected(path, at);
  if (s.threw || !resultIs(s.value, e)) return `${seen(s)}; expected ${path}'s ${e.ok ? fmt(e.value) : e.what}`;
  return null;
}

/**
 * Checks a completed cancel of `path`: its whole subtree ended first, and it
 * is Cancelled — unless it failed meanwhile (its cleanup threw), which the
 * cancel throws.
 */
function checkCancelled(judge: Judge, world: World, s: Step, path: string): string | null {
  const late = judge.subtree(path).find((d) => !(world.exitOf(d) < s.end));
  if (late !== undefined) return `returned before ${late} ended (event ${world.exitOf(late)})`;
  const e = judge.expected(path, s.end);
  if (e.ok) return `${path} resolved although cancelled`;
  if (e.cancelled === true) {
    if (s.threw) return seen(s);
    return s.status === "cancelled" ? null : `afterwards ${path}'s status is ${s.status}`;
  }
  if (!s.threw || !e.match(s.error)) return `${seen(s)}; expected it to throw ${path}'s ${e.what}`;
  return world.statusOf(path) === "failed" ? null : `${path}'s final status is ${world.statusOf(path)}`;
}

const maxExit = (world: World, paths: readonly string[]): number => Math.max(-1, ...paths.map((p) => world.exitOf(p)));

/** Analyses the steps of one task. */
export function analyse(world: World, run: TaskRun): TaskModel {
  const model: TaskModel = { steps: [], consumed: new Set(), cancels: new Map() };
  const cancel = (path: string, point: CancelPoint): void => {
    const list = model.cancels.get(path);
    if (list === undefined) model.cancels.set(path, [point]);
    else list.push(point);
  };
  const consume = (s: Step, ...paths: string[]): void => {
    if (completed(s)) for (const p of paths) model.consumed.add(p);
  };
  const exit = (p: string): number => world.exitOf(p);
  /** The collector's tasks, oldest first. */
  const held: string[] = [];
  let spawned = 0;
  let next = 0;
  for (let i = 0; i < run.node.actions.length && next < run.steps.length; i++) {
    const action = run.node.actions[i]!;
    if (action.t === "spawn") {
      const kid = run.kids[spawned++];
      if (kid !== undefined && action.orphan) held.push(kid);
      continue;
    }
    const s = run.steps[next++]!;
    const kid = (k: number): string => run.kids[k]!;
    const plain = (suspends: boolean, resumedBy: number, verify: StepModel["verify"]): StepModel => ({
      step: s,
      suspends,
      resumedBy,
      parkedOn: null,
      verify,
    });
    const a = s.a;
    let m: StepModel;
    switch (a.t) {
      case "yield":
        m = plain(true, s.end, () => (s.threw ? seen(s) : null));
        break;
      case "await": {
        const target = kid(a.k);
        consume(s, target);
        m = plain(exit(target) > s.begin, exit(target), (judge) => {
          if (!(exit(target) < s.end)) return `returned before ${target} ended`;
          const e = judge.expected(target, s.begin);
          if (a.mode === "task") return checkResult(judge, s, target, s.begin);
          const good = e.ok ? !s.threw && s.value === e.value : s.threw && e.match(s.error);
          return good ? null : `${seen(s)}; expected ${e.ok ? fmt(e.value) : e.what}`;
        });
        break;
      }
      case "cancel": {
        const target = kid(a.k);
        cancel(target, { by: "cancel", at: s.begin });
        consume(s, target);
        m = plain(exit(target) > s.begin, exit(target), (judge) => checkCancelled(judge, world, s, target));
        break;
      }
      case "join":
        m = analyseJoin(world, s, a.mode, a.ks.map(kid), cancel, consume);
        break;
      case "wait": {
        const signals = world.signalsOf(run.path);
        const before = signals.some((x) => x < s.begin);
        m = plain(!before, before ? s.begin : (signals.find((x) => x > s.begin) ?? INF), () => (s.threw ? seen(s) : null));
        break;
      }
      case "signal": {
        const target = kid(a.k);
        m = plain(false, s.end, (judge) => {
          const woke = wasWaiting(judge, world, target, s.begin);
          return s.threw || s.value !== woke ? `${seen(s)}; expected ${woke} (whether ${target} was parked on its trigger)` : null;
        });
        break;
      }
      case "syscall": {
        const parked = a.mode === "early" ? s.uids[1] : s.uids[0];
        const fired = parked === undefined ? INF : world.firedAt(parked);
        m = {
          ...plain(true, a.mode === "never" ? INF : fired, () => {
            if (s.threw) return seen(s);
            if (s.uids.length !== (a.mode === "early" ? 2 : 1)) return `made syscalls [${s.uids.join()}]`;
            if (!(s.begin < fired && fired < s.end)) return `returned, but its syscall was fired at event ${fired}`;
            if (a.mode === "early" && !world.firedWith(parked!).includes(s.uids[0]!)) {
              return `the early syscall ${s.uids[0]} was not signalled with ${parked}`;
            }
            return null;
          }),
          parkedOn: parked ?? null,
        };
        break;
      }
      case "protect":
        m = plain(a.yields > 0, s.end, () => (s.threw ? seen(s) : null));
        break;
      case "care": {
        // Miou's care: the held task that ended first, null when none has ended, undefined when empty.
        const ended = held.filter((p) => exit(p) < s.begin).sort((x, y) => exit(x) - exit(y));
        const expected = held.length === 0 ? undefined : (ended[0] ?? null);
        const holding = held.join(", ");
        if (typeof expected === "string") held.splice(held.indexOf(expected), 1);
        if (typeof expected === "string" && s.mid?.took === expected) consume(s, expected);
        m = plain(false, s.end, (judge) => {
          if (s.mid?.took !== expected) return `care answered ${fmt(s.mid?.took)}, expected ${fmt(expected)} (holding ${holding})`;
          return typeof expected === "string" ? checkResult(judge, s, expected, s.begin) : s.threw ? seen(s) : null;
        });
        break;
      }
      case "take": {
        // Miou's take: the oldest held task at once, in whatever state; undefined when empty.
        const expected = held.shift();
        const took = s.mid?.took;
        const at = s.mid?.idx ?? s.begin;
        const op = s.mid?.op;
        if (expected !== undefined && took === expected) {
          consume(s, expected);
          if (op === "cancel") cancel(expected, { by: "take", at });
        }
        const pending = typeof took === "string" && exit(took) > at;
        m = plain(pending, typeof took === "string" ? exit(took) : s.end, (judge) => {
          if (took !== expected) return `take answered ${fmt(took)}, expected ${fmt(expected)}`;
          if (expected === undefined) return s.threw ? seen(s) : null;
          if (op === "cancel") return checkCancelled(judge, world, s, expected);
          if (a.by === "cancel" || op !== "await") return `did ${fmt(op)} with the taken task, asked to ${a.by}`;
          return checkResult(judge, s, expected, at);
        });
        break;
      }
      case "get": {
        // Miou's get: one ended held task (a success preferred), or the first to end; undefined when empty.
        const pool = held.filter((p) => exit(p) < s.begin);
        const atOnce = held.length === 0 || pool.length !== 0;
        const first = [...held].sort((x, y) => exit(x) - exit(y))[0];
        const chosen = held.length === 0 ? undefined : atOnce ? identify(world, s.value, pool) : first;
        const snapshot = [...held];
        if (!s.threw && chosen !== undefined) {
          held.splice(held.indexOf(chosen), 1);
          consume(s, chosen);
        }
        m = plain(!atOnce, first === undefined ? INF : exit(first), (judge) => {
          if (snapshot.length === 0) return s.threw || s.value !== undefined ? `${seen(s)} from an empty collector` : null;
          if (atOnce) {
            const wrong = checkRandomPick(judge, s, s.begin, pool, chosen);
            if (wrong !== null) return wrong;
          }
          return checkResult(judge, s, chosen!, s.begin);
        });
        break;
      }
      case "drain": {
        const all = held.splice(0);
        consume(s, ...all);
        m = analyseDrain(world, s, all);
        break;
      }
    }
    model.steps.push(m);
  }
  return model;
}

/** awaitAll / awaitOne / awaitFirst over `members` (a task may be listed twice). */
function analyseJoin(
  world: World,
  s: Step,
  mode: "all" | "one" | "first",
  members: readonly string[],
  cancel: (path: string, point: CancelPoint) => void,
  consume: (s: Step, ...paths: string[]) => void,
): StepModel {
  const exit = (p: string): number => world.exitOf(p);
  const distinct = [...new Set(members)];
  const ended = distinct.filter((p) => exit(p) < s.begin);
  const first = [...distinct].sort((x, y) => exit(x) - exit(y))[0]!;
  const base = { step: s, parkedOn: null };
  if (mode === "all") {
    consume(s, ...distinct);
    return {
      ...base,
      suspends: ended.length < distinct.length,
      resumedBy: maxExit(world, distinct),
      verify(judge) {
        const rs = s.value as unknown[];
        if (s.threw || !Array.isArray(rs) || rs.length !== members.length) return `${seen(s)}; expected ${members.length} results`;
        const wrong = members.findIndex((p, n) => !resultIs(rs[n], judge.expected(p, s.begin)));
        return wrong < 0 ? null : `result #${wrong} ${fmt(rs[wrong])} is not ${members[wrong]}'s`;
      },
    };
  }
  // The chosen task: one that had ended (picked at random, a success preferred), or else the first to end.
  const atOnce = ended.length !== 0;
  let chosen = atOnce ? identify(world, s.value, ended) : first;
  if (chosen === undefined && s.threw && mode === "first") {
    // Cancelled while its losers ended: the winner is the one awaitFirst did not cancel.
    const kept = ended.filter((p) => world.statusOf(p) !== "cancelled");
    if (kept.length === 1) chosen = kept[0];
  }
  const verify = (judge: Judge): string | null => {
    if (atOnce) {
      const wrong = checkRandomPick(judge, s, s.begin, ended, chosen);
      if (wrong !== null) return wrong;
    }
    if (mode === "first") {
      // The losers it cancelled while they ran and that failed meanwhile: awaitFirst throws their errors.
      const failed = losers
        .filter((p) => judge.cancelledAt(p) < exit(p) && world.statusOf(p) === "failed")
        .sort((x, y) => exit(x) - exit(y));
      if (failed.length !== 0) {
        const own = judge.expected(chosen!, s.begin).ok ? [] : judge.failuresOf(chosen!);
        const e = failedWith([...own, ...failed.flatMap((p) => judge.failuresOf(p))]);
        return s.threw && e.match(s.error) ? null : `${seen(s)}; expected ${e.what} (its losers failed while cancelled)`;
      }
    }
    return checkResult(judge, s, chosen!, s.begin);
  };
  if (mode === "one") {
    if (chosen !== undefined) consume(s, chosen);
    return { ...base, suspends: !atOnce, resumedBy: atOnce ? s.end : exit(first), verify };
  }
  consume(s, ...distinct);
  const losers = distinct.filter((p) => p !== chosen);
  if (atOnce) {
    // Losers are cancelled at once; the task waits for those still running.
    if (chosen !== undefined) for (const p of losers) cancel(p, { by: "awaitFirst", at: s.begin });
    const pending = losers.filter((p) => exit(p) > s.begin);
    return { ...base, suspends: pending.length !== 0, resumedBy: maxExit(world, pending), verify };
  }
  // Losers are cancelled when the first one ends, if the task still waits then.
  const x1 = exit(first);
  for (const p of losers) cancel(p, { by: "awaitFirst", at: x1, unlessParentBy: x1 });
  return { ...base, suspends: true, resumedBy: losers.length === 0 ? x1 : maxExit(world, losers), verify };
}

/** `drain`: a `get` until the collector is empty. Its inner steps are not logged, so its rule is looser. */
function analyseDrain(world: World, s: Step, held: readonly string[]): StepModel {
  const exit = (p: string): number => world.exitOf(p);
  const pendingAtBegin = held.filter((p) => exit(p) > s.begin);
  return {
    step: s,
    suspends: pendingAtBegin.length !== 0,
    resumedBy: maxExit(world, held),
    parkedOn: null,
    verify: () => null,
    ownRule(judge, j) {
      if (s.threw) {
        if (!(s.error instanceof B.Cancelled)) return seen(s);
        if (!(j < s.end) || !held.some((p) => exit(p) > j)) return `${seen(s)}, but it had nothing left to wait for`;
        return null;
      }
      if (j < s.begin && pendingAtBegin.length !== 0)
        return `returned although cancelled before it began, with ${pendingAtBegin.join(", ")} running`;
      const rs = s.value as unknown[];
      if (!Array.isArray(rs) || rs.length !== held.length) return `${seen(s)}; expected the results of ${held.join(", ") || "nothing"}`;
      const order = rs.map((r) => identify(world, r, held));
      for (let n = 0; n < rs.length; n++) {
        const p = order[n];
        if (p === undefined || order.indexOf(p) !== n) return `result #${n} ${fmt(rs[n])} is not one more of ${held.join(", ")}`;
        if (!resultIs(rs[n], judge.expected(p, s.begin))) return `result #${n} is not ${p}'s`;
        if (!(exit(p) < s.end)) return `returned before ${p} ended`;
      }
      const endedAtBegin = held.filter((p) => exit(p) < s.begin);
      const firstOk =
        endedAtBegin.length !== 0
          ? endedAtBegin.includes(order[0]!)
          : order[0] === [...pendingAtBegin].sort((x, y) => exit(x) - exit(y))[0];
      return rs.length === 0 || firstOk ? null : `its first result came from ${order[0]}`;
    },
  };
}

/** Whether `path` was parked on its trigger at event `x` (so that signalling it wakes it). */
function wasWaiting(judge: Judge, world: World, path: string, x: number): boolean {
  if (judge.j(path) < x) return false; // a cancelled waiter leaves the trigger
  const signals = world.signalsOf(path);
  return judge
    .stepsOf(path)
    .some(
      (m) => m.step.a.t === "wait" && m.suspends && m.step.begin < x && x < m.step.end && !signals.some((y) => m.step.begin < y && y < x),
    );
}
