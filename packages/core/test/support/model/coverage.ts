/**
 * The situations a run reached, so that the property test can tell that its
 * random programs still cover what they are meant to.
 */
import * as B from "../../../src/index.js";
import type { TaskRun } from "./replay.js";
import type { TaskModel } from "./steps.js";

export type Coverage =
  | "resolved"
  | "stillHasChildren"
  | "callbackFailed"
  | "rejected"
  | "interruptedStep"
  | "interruptedCleanup"
  | "neverStarted"
  | "cancelOfEndedChild"
  | "cancelOfEndingParent"
  | "depth3"
  | "signalBeforeWait"
  | "signalWokeWaiter"
  | "signalAfterCancelledWait"
  | "syscallReady"
  | "syscallEarly"
  | "syscallCancelled"
  | "careTask"
  | "careNull"
  | "careEmpty"
  | "takePending"
  | "takeEnded"
  | "takeEmpty"
  | "getAtOnce"
  | "getWaited"
  | "getCancelled"
  | "getEmpty"
  | "drain"
  | "onCancellation"
  | "finallyCancelled"
  | "awaitAllTwice"
  | "awaitOne"
  | "awaitFirstLosers"
  | "randomPick";

/** What the check established about a run. */
export interface Facts {
  readonly tasks: readonly string[];
  readonly runs: ReadonlyMap<string, TaskRun>;
  readonly models: ReadonlyMap<string, TaskModel>;
  exitOf(path: string): number;
  just(path: string): number;
  cancelledAt(path: string): number;
  /** Each syscall's reports to `select` as cancelled. */
  readonly reports: ReadonlyMap<number, readonly number[]>;
  /** Each task's onCancellation runs. */
  readonly handlerRuns: ReadonlyMap<string, readonly number[]>;
  readonly result: { ok: true; value: unknown } | { ok: false; error: unknown };
  /** How the run failed, if a rule was broken. */
  readonly fatal: "stillHasChildren" | "callbackFailed" | null;
}

export function coverage({ tasks, runs, models, exitOf, just, cancelledAt, reports, handlerRuns, result, fatal }: Facts): Set<Coverage> {
  const reached = new Set<Coverage>();
  const reach = (tag: Coverage, cond: unknown): void => void (cond && reached.add(tag));
  reach(result.ok ? "resolved" : fatal === "stillHasChildren" ? "stillHasChildren" : fatal !== null ? "callbackFailed" : "rejected", true);
  for (const path of tasks) {
    const run = runs.get(path)!;
    const j = just(path);
    reach("depth3", path.split(".").length === 4);
    reach("neverStarted", run.startIdx === null);
    reach("interruptedCleanup", run.node.cleanup > 0 && run.bodyEnd !== null && !run.cleanupDone);
    reach("onCancellation", handlerRuns.has(path));
    const failedBody = run.bodyEnd !== null && !run.bodyEnd.ok;
    reach("cancelOfEndingParent", failedBody && run.bodyEnd!.idx < j && j < exitOf(path) && run.kids.some((k) => exitOf(k) > j));
    for (const m of models.get(path)!.steps) {
      const s = m.step;
      const a = s.a;
      const took = s.mid?.took;
      reach("interruptedStep", s.threw && s.error instanceof B.Cancelled);
      reach("cancelOfEndedChild", a.t === "cancel" && exitOf(run.kids[a.k]!) < s.begin);
      reach("signalBeforeWait", a.t === "wait" && !m.suspends);
      reach("signalWokeWaiter", a.t === "signal" && s.value === true);
      reach(
        "signalAfterCancelledWait",
        a.t === "signal" &&
          s.value === false &&
          (models.get(run.kids[a.k]!)?.steps ?? []).some((w) => w.step.a.t === "wait" && w.step.threw && w.step.begin < s.begin),
      );
      reach("syscallReady", a.t === "syscall" && a.mode === "ready" && !s.threw);
      reach("syscallEarly", a.t === "syscall" && a.mode === "early" && !s.threw);
      reach("syscallCancelled", m.parkedOn !== null && reports.has(m.parkedOn));
      reach("careTask", a.t === "care" && typeof took === "string");
      reach("careNull", a.t === "care" && took === null);
      reach("careEmpty", a.t === "care" && took === undefined);
      reach("takePending", a.t === "take" && typeof took === "string" && exitOf(took) > s.mid!.idx);
      reach("takeEnded", a.t === "take" && typeof took === "string" && exitOf(took) < s.mid!.idx);
      reach("takeEmpty", a.t === "take" && took === undefined);
      reach("getEmpty", a.t === "get" && !s.threw && s.value === undefined);
      reach("getAtOnce", a.t === "get" && !s.threw && s.value !== undefined && !m.suspends);
      reach("getWaited", a.t === "get" && !s.threw && m.suspends);
      reach("getCancelled", a.t === "get" && s.threw && m.suspends);
      reach("drain", a.t === "drain" && !s.threw && (s.value as unknown[]).length >= 2);
      reach("finallyCancelled", s.fin?.cancelled === true);
      reach("awaitAllTwice", a.t === "join" && a.mode === "all" && !s.threw && new Set(a.ks).size < a.ks.length);
      reach("awaitOne", a.t === "join" && a.mode === "one" && !s.threw);
      reach("randomPick", a.t === "join" && a.mode !== "all" && !s.threw && !m.suspends && new Set(a.ks).size > 1);
    }
    for (const [kid, points] of models.get(path)!.cancels) {
      reach(
        "awaitFirstLosers",
        points.some((p) => p.by === "awaitFirst" && cancelledAt(kid) === p.at),
      );
    }
  }
  return reached;
}
