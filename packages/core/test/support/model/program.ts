/**
 * The programs of the model-based test: a tree of task scripts.
 *
 * A script is a list of actions followed by an ending (return, throw, or spin
 * — yield forever until cancelled) and a `finally` block that yields
 * `cleanup` times. Paths name tasks statically: the root is "0", its second
 * spawned child "0.1", etc. Child indices (`k`) count every child the task
 * spawned, in spawn order, background ones (`orphan`) included.
 *
 * Actions: spawn a child (into the task's orphans collector when `orphan`),
 * yield n times, await child k, cancel child k, await several children at once
 * (`join`: awaitAll / awaitOne / awaitFirst, a child possibly listed twice),
 * wait on the task's own trigger, signal child k's trigger, suspend on a
 * syscall of the test events backend (made ready by `select`, signalled
 * early, or never), run a few yields under `protect`, and Miou's orphans
 * operations on the task's collector (`care`, `take`, `get`, `drain`).
 */

export type AwaitMode = "task" | "exn" | "catch";
export type End = "return" | "throw" | "spin";
/** awaitAll, awaitOne, awaitFirst. */
export type JoinMode = "all" | "one" | "first";
/** Made ready by the next `select`; signalled before the task suspends on it; never signalled. */
export type SyscallMode = "ready" | "early" | "never";
/** How a task consumes a task it took from its collector. */
export type ConsumeBy = "await" | "cancel";

/** An action; `C` is the type of a spawned child's script. */
export type ActionOf<C> =
  | { readonly t: "spawn"; readonly child: C; readonly orphan: boolean }
  | { readonly t: "yield"; readonly n: number }
  | { readonly t: "await"; readonly k: number; readonly mode: AwaitMode }
  | { readonly t: "cancel"; readonly k: number }
  | { readonly t: "join"; readonly mode: JoinMode; readonly ks: readonly number[] }
  | { readonly t: "wait" }
  | { readonly t: "signal"; readonly k: number }
  | { readonly t: "syscall"; readonly mode: SyscallMode }
  | { readonly t: "protect"; readonly yields: number; readonly throwing: boolean }
  | { readonly t: "care" }
  | { readonly t: "take"; readonly by: ConsumeBy }
  | { readonly t: "get" }
  | { readonly t: "drain" };

export type Action = ActionOf<Script>;

export interface Script {
  readonly actions: readonly Action[];
  readonly end: End;
  /** Yields in the `finally` block (asynchronous cleanup). */
  readonly cleanup: number;
}

/** What the generator produces: child indices are free numbers, fixed by `normalize`. */
export type RawAction = ActionOf<RawScript>;

export interface RawScript {
  readonly actions: readonly RawAction[];
  readonly end: End;
  readonly cleanup: number;
  /**
   * Consume every child left unconsumed before the ending: "await" (cancel
   * for a child that would never end), "cancel", or forget them (undefined).
   * Background children are taken from the collector either way.
   */
  readonly tidy?: "await" | "cancel" | undefined;
}

/** The error a script's `throw` ending throws. */
export class ScriptError extends Error {
  constructor(readonly path: string) {
    super(`script ${path} threw`);
    this.name = "ScriptError";
  }
}

/** The error a throwing `onCancellation` handler throws. */
export class HandlerError extends Error {
  constructor(readonly path: string) {
    super(`the onCancellation handler of ${path} threw`);
    this.name = "HandlerError";
  }
}

/** What an action that cannot apply becomes. */
const PAUSE = { t: "yield", n: 1 } as const;

/** What `protect`'s body returns. */
export const PROTECTED = "protected";

/**
 * Whether a task running `script` can wait forever unless it is cancelled:
 * it spins, suspends on a syscall nobody signals, or waits on its trigger
 * before anyone signalled it.
 */
export function mayNeverEnd(script: Script, signalled: boolean): boolean {
  if (script.end === "spin") return true;
  return script.actions.some((a) => (a.t === "syscall" && a.mode === "never") || (a.t === "wait" && !signalled));
}

/** The `k`th of `list`, wrapping around; a negative `k` counts from the end (-1: the most recent child). */
const pick = (list: readonly number[], k: number): number => list[k < 0 ? Math.max(0, list.length + k) : k % list.length]!;

const waits = (script: Script): boolean => script.actions.some((a) => a.t === "wait");

interface Kid {
  readonly script: Script;
  readonly orphan: boolean;
  /** Cancelled by the parent (or possibly, by an awaitFirst it was part of). */
  cancelled: boolean;
  signalled: boolean;
  consumed: boolean;
}

const neverEnds = (kid: Kid): boolean => !kid.cancelled && mayNeverEnd(kid.script, kid.signalled);

/**
 * Makes a raw script valid, so that a program always ends by itself:
 * - `k` refers to an existing child (modulo their number; a negative `k`
 *   counts back from the most recent): a foreground one for await, cancel
 *   and join (an action with no such child becomes a yield), any one for
 *   signal (for `k ≥ 0`, one that waits on its trigger and was not signalled
 *   yet, if any);
 * - a child that waits on its trigger is signalled before it is awaited; one
 *   that may still never end is cancelled rather than awaited, and a join
 *   that could wait for it forever becomes an awaitFirst (or a cancel);
 *   joins leave out children that were (or may have been) cancelled;
 * - `get` and `drain` become `care` and `take` while the collector holds a
 *   child that may never end;
 * - the root neither spins, nor waits on a trigger, nor suspends forever;
 * - a `tidy` script consumes its leftover children before its ending.
 */
export function normalize(raw: RawScript, root = true): Script {
  const actions: Action[] = [];
  const kids: Kid[] = [];
  const foreground = (): number[] => kids.flatMap((kid, k) => (kid.orphan ? [] : [k]));
  /** Before awaiting a child that waits on its trigger, signal it. */
  const release = (k: number): void => {
    const kid = kids[k]!;
    if (kid.cancelled || kid.signalled || !waits(kid.script)) return;
    kid.signalled = true;
    actions.push({ t: "signal", k });
  };
  for (const a of raw.actions) {
    switch (a.t) {
      case "spawn": {
        const child = normalize(a.child, false);
        kids.push({ script: child, orphan: a.orphan, cancelled: false, signalled: false, consumed: false });
        actions.push({ t: "spawn", child, orphan: a.orphan });
        break;
      }
      case "await":
      case "cancel": {
        const fg = foreground();
        if (fg.length === 0) {
          actions.push(PAUSE);
          break;
        }
        const k = pick(fg, a.k);
        const kid = kids[k]!;
        kid.consumed = true;
        if (a.t === "await") release(k);
        if (a.t === "cancel" || neverEnds(kid)) {
          kid.cancelled = true;
          actions.push({ t: "cancel", k });
        } else actions.push({ t: "await", k, mode: a.mode });
        break;
      }
      case "join": {
        const fg = foreground().filter((k) => !kids[k]!.cancelled);
        if (fg.length === 0) {
          actions.push(PAUSE);
          break;
        }
        const ks = a.ks.map((k) => pick(fg, k));
        for (const k of new Set(ks)) release(k);
        const ending = ks.filter((k) => !neverEnds(kids[k]!));
        let mode = a.mode;
        if (ending.length === 0) {
          kids[ks[0]!]!.cancelled = kids[ks[0]!]!.consumed = true;
          actions.push({ t: "cancel", k: ks[0]! });
          break;
        }
        if (mode === "all" && ending.length < ks.length) mode = "first";
        for (const k of ks) {
          if (mode !== "one") kids[k]!.consumed = true;
          if (mode === "first") kids[k]!.cancelled = true;
        }
        actions.push({ t: "join", mode, ks });
        break;
      }
      case "signal": {
        if (kids.length === 0) {
          actions.push(PAUSE);
          break;
        }
        // Rather a child that waits for it.
        const waiting = kids.flatMap((kid, k) => (!kid.signalled && waits(kid.script) ? [k] : []));
        const k =
          a.k >= 0 && waiting.length !== 0
            ? pick(waiting, a.k)
            : pick(
                kids.map((_, k) => k),
                a.k,
              );
        kids[k]!.signalled = true;
        actions.push({ t: "signal", k });
        break;
      }
      case "wait":
        actions.push(root ? PAUSE : a);
        break;
      case "syscall":
        actions.push(root && a.mode === "never" ? { t: "syscall", mode: "ready" } : a);
        break;
      case "get":
      case "drain": {
        const stuck = kids.some((kid) => kid.orphan && neverEnds(kid));
        actions.push(stuck ? (a.t === "get" ? { t: "care" } : { t: "take", by: "cancel" }) : a);
        break;
      }
      default:
        actions.push(a);
    }
  }
  if (raw.tidy !== undefined) {
    kids.forEach((kid, k) => {
      if (kid.orphan) actions.push({ t: "take", by: raw.tidy === "cancel" ? "cancel" : "await" });
      else if (!kid.consumed) {
        if (raw.tidy === "await") release(k);
        actions.push(raw.tidy === "cancel" || neverEnds(kid) ? { t: "cancel", k } : { t: "await", k, mode: "task" });
      }
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
  const kid = (n: number): string => `${path}.${n}`;
  for (const a of node.actions) {
    const line = (text: string): void => void lines.push(`${indent}  ${text}`);
    switch (a.t) {
      case "spawn":
        lines.push(show(a.child, kid(k++), `${indent}  `).replace(/^\s*/, `${indent}  spawn${a.orphan ? " orphan" : ""} `));
        break;
      case "await":
        line(`await(${a.mode}) ${kid(a.k)}`);
        break;
      case "cancel":
        line(`cancel ${kid(a.k)}`);
        break;
      case "join":
        line(`await${a.mode === "all" ? "All" : a.mode === "one" ? "One" : "First"} [${a.ks.map(kid).join(", ")}]`);
        break;
      case "signal":
        line(`signal ${kid(a.k)}`);
        break;
      case "syscall":
        line(`syscall(${a.mode})`);
        break;
      case "protect":
        line(`protect(${a.yields} yields${a.throwing ? ", onCancellation throws" : ""})`);
        break;
      case "take":
        line(`take, then ${a.by}`);
        break;
      case "yield":
        line(a.n === 1 ? "yield" : `yield ×${a.n}`);
        break;
      default:
        line(a.t);
    }
  }
  return lines.join("\n");
}
