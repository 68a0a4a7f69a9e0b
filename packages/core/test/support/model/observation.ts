/**
 * What a run of a program records: one event log, in the order things
 * happened, plus how `run` settled.
 *
 * Events with a `path` belong to that task's own steps (its script, logged
 * around the real operations). The others come from elsewhere: the exit hook
 * (`exit`), the tracer (`cancelRequest`), a `protect` handler run while
 * another task cancels this one (`onCancellation`), and the events backend
 * (`select`).
 */
import type * as B from "../../../src/index.js";
import type * as L from "../../../src/lowlevel/index.js";

export type Ev =
  | { k: "start"; path: string; uid: number }
  | { k: "spawned"; path: string; i: number; child: string; uid: number; orphan: boolean }
  /** An action begins; `uids` are the syscalls it made. */
  | { k: "begin"; path: string; i: number; uids?: number[] }
  /** `care`/`take` answered (a task's path, null or undefined); `op`: what the task does with it. */
  | { k: "mid"; path: string; i: number; took: string | null | undefined; op: "await" | "cancel" | null }
  | { k: "protectFinally"; path: string; i: number; cancelled: boolean }
  | { k: "end"; path: string; i: number; threw: boolean; value?: unknown; error?: unknown; status?: B.TaskStatus }
  | { k: "spin"; path: string }
  | { k: "cleanupBegin"; path: string }
  | { k: "cleanupEnd"; path: string }
  | { k: "bodyEnd"; path: string; ok: boolean; value?: unknown; error?: unknown }
  | { k: "exit"; uid: number; ending: L.Ending; parentUid: number | null }
  | { k: "cancelRequest"; uid: number }
  | { k: "onCancellation"; owner: string; error?: unknown }
  | { k: "select"; block: boolean; cancelled: number[]; fired: number[] };

/** An event of a task's own steps. */
export type StepEv = Extract<Ev, { path: string }>;

export function isStepEvent(e: Ev): e is StepEv {
  return "path" in e;
}

export interface Observation {
  readonly events: readonly Ev[];
  /** What `onSpawn` saw: child uid, the hook's parent uid, and `child.parent.uid`. */
  readonly spawnHook: readonly { child: number; parent: number; childParent: number | null }[];
  readonly run: { ok: true; value: unknown } | { ok: false; error: unknown } | { hung: true };
  /** `task.status` of every task once `run` settled. */
  readonly statuses: ReadonlyMap<string, B.TaskStatus>;
  /** How many tasks had ended (exit hook) when `run` settled. */
  readonly exitsAtSettle: number;
  /** How many times the events backend's finaliser ran. */
  readonly finalised: number;
  /** Whether ready tasks ran oldest first (no scheduling policy). */
  readonly fifo: boolean;
}

export function fmt(x: unknown): string {
  if (x instanceof Error) return `${x.name}(${x.message})`;
  if (typeof x === "string") return JSON.stringify(x);
  if (x !== null && typeof x === "object") return JSON.stringify(x, (_, v: unknown) => (v instanceof Error ? fmt(v) : v));
  return String(x);
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
