/**
 * What the model predicts of a program without looking at any run: the
 * natural outcome of the root and of every task its parent awaits (the
 * "deterministic region"), whether a forgotten child is certain or possible,
 * and which children can never start.
 *
 * Some outcomes depend on the interleaving (which child of an awaitOne ends
 * first, whether `care` finds an ended task...): the prediction then says
 * `null` (unknown) rather than guess, and claims nothing beyond that point.
 */
import { type Action, type Script, walk } from "./program.js";

export type ErrorTag = { kind: "script"; path: string } | { kind: "cancelled" } | { kind: "stillHasChildren"; path: string };
export type Outcome = { ok: true; value: string } | { ok: false; error: ErrorTag };

export interface Prediction {
  /** Scripts that may return while a child is unconsumed: the only possible StillHasChildren culprits. */
  readonly staticForgetters: Set<string>;
  /** A task of the deterministic region returns with an unconsumed child: StillHasChildren is certain. */
  detFatal: boolean;
  /** The root's natural outcome (null: it depends on the interleaving). */
  root: Outcome | null;
  /** Natural outcome of every task in the deterministic region whose outcome is certain. */
  readonly det: Map<string, Outcome>;
  /** Children cancelled in the step that spawned them: if spawned, they never run a step of their body. */
  readonly neverStarts: Set<string>;
}

const enum Consumed {
  No = 0,
  Maybe = 1,
  Yes = 2,
}

/** Actions that never suspend: a child spawned before them has not run yet. */
const NEVER_SUSPENDS = new Set<Action["t"]>(["spawn", "signal", "care"]);

export function predict(program: Script): Prediction {
  const pred: Prediction = {
    staticForgetters: new Set(),
    detFatal: false,
    root: { ok: true, value: "0" },
    det: new Map(),
    neverStarts: new Set(),
  };
  walk(program, "0", (node, path) => {
    // Children spawned since the last action that may suspend.
    let quiet: number[] = [];
    let spawned = 0;
    for (const a of node.actions) {
      if (a.t === "spawn") quiet.push(spawned++);
      else if (a.t === "cancel" && quiet.includes(a.k)) pred.neverStarts.add(`${path}.${a.k}`);
      if (!NEVER_SUSPENDS.has(a.t)) quiet = [];
    }
    if (node.end === "return" && consumption(node).unconsumed !== Consumed.No) pred.staticForgetters.add(path);
  });
  pred.root = natural(program, "0", pred);
  if (pred.root !== null) pred.det.set("0", pred.root);
  return pred;
}

interface Kid {
  readonly path: string;
  readonly node: Script;
  readonly orphan: boolean;
  cancelled: boolean;
  /** Part of an awaitFirst: cancelled there unless it won. */
  maybeCancelled: boolean;
  consumed: Consumed;
  result: Outcome | null | undefined;
}

/** The children a script spawns, and how its actions consume them (assuming every action completes). */
class Consumption {
  readonly kids: Kid[] = [];
  /** How many background children the collector certainly / possibly still holds. */
  private heldLow = 0;
  private heldHigh = 0;

  constructor(private readonly path: string) {}

  apply(a: Action): void {
    const kids = this.kids;
    switch (a.t) {
      case "spawn":
        kids.push({
          path: `${this.path}.${kids.length}`,
          node: a.child,
          orphan: a.orphan,
          cancelled: false,
          maybeCancelled: false,
          consumed: Consumed.No,
          result: undefined,
        });
        if (a.orphan) {
          this.heldLow++;
          this.heldHigh++;
        }
        break;
      case "cancel":
        kids[a.k]!.cancelled = true;
        kids[a.k]!.consumed = Consumed.Yes;
        break;
      case "await":
        kids[a.k]!.consumed = Consumed.Yes;
        break;
      case "join": {
        const single = new Set(a.ks).size === 1;
        for (const k of a.ks) {
          const kid = kids[k]!;
          if (a.mode !== "one" || single) kid.consumed = Consumed.Yes;
          else if (kid.consumed === Consumed.No) kid.consumed = Consumed.Maybe;
          if (a.mode === "first" && !single) kid.maybeCancelled = true;
        }
        break;
      }
      case "care":
        this.heldLow = Math.max(0, this.heldLow - 1);
        break;
      case "take":
      case "get":
        this.heldLow = Math.max(0, this.heldLow - 1);
        this.heldHigh = Math.max(0, this.heldHigh - 1);
        break;
      case "drain":
        this.heldLow = this.heldHigh = 0;
        break;
    }
  }

  /** Whether a child is left unconsumed when the body returns. */
  get unconsumed(): Consumed {
    if (this.heldLow > 0 || this.kids.some((k) => !k.orphan && k.consumed === Consumed.No)) return Consumed.Yes;
    if (this.heldHigh > 0 || this.kids.some((k) => !k.orphan && k.consumed === Consumed.Maybe)) return Consumed.Maybe;
    return Consumed.No;
  }
}

function consumption(node: Script): { unconsumed: Consumed } {
  const c = new Consumption("");
  for (const a of node.actions) c.apply(a);
  return c;
}

/**
 * Whether some task of this subtree may fail: then a cancel of its root may
 * throw (what the subtree throws while cancelled is never lost), depending on
 * when the cancellation lands.
 */
function mayFail(node: Script): boolean {
  let may = false;
  walk(node, "", (n) => {
    if (n.end === "throw" || (n.end === "return" && consumption(n).unconsumed !== Consumed.No) || awaitsCancelled(n)) may = true;
  });
  return may;
}

/**
 * Whether a task awaits, letting its error through, a child it cancelled (or
 * may have, in an awaitFirst it lost): it then fails with that child's
 * `Cancelled`, an error of its own body, which its own cancel throws.
 */
function awaitsCancelled(node: Script): boolean {
  const c = new Consumption("");
  const cancelled = (k: number): boolean => c.kids[k]!.cancelled || c.kids[k]!.maybeCancelled;
  for (const a of node.actions) {
    if (a.t === "await" && a.mode !== "task" && cancelled(a.k)) return true;
    if (a.t === "join" && a.ks.some(cancelled)) return true;
    c.apply(a);
  }
  return false;
}

/** Whether an action cancels a child that may fail, so that it may throw its error. */
function cancelsWhatMayFail(a: Action, c: Consumption): boolean {
  switch (a.t) {
    case "cancel":
      return mayFail(c.kids[a.k]!.node);
    case "take":
      return c.kids.some((k) => k.orphan && mayFail(k.node));
    case "join":
      return a.mode === "first" && a.ks.some((k) => mayFail(c.kids[k]!.node));
    default:
      return false;
  }
}

/**
 * A task failing with `r` cancels the children it has not consumed; one that
 * fails meanwhile adds its error to the task's outcome, which is then unknown.
 */
function failing(c: Consumption, r: Outcome): Outcome | null {
  return c.kids.some((k) => k.consumed !== Consumed.Yes && mayFail(k.node)) ? null : r;
}

/** What a task does when nothing cancels it: its children's outcomes come from their own scripts. */
function natural(node: Script, path: string, pred: Prediction): Outcome | null {
  const c = new Consumption(path);
  for (const a of node.actions) {
    if (cancelsWhatMayFail(a, c)) return null;
    c.apply(a);
    if (a.t !== "await") continue;
    const kid = c.kids[a.k]!;
    let r: Outcome | null;
    if (kid.cancelled) r = { ok: false, error: { kind: "cancelled" } };
    else if (kid.maybeCancelled) r = null;
    else {
      if (kid.result === undefined) {
        kid.result = natural(kid.node, kid.path, pred);
        if (kid.result !== null) pred.det.set(kid.path, kid.result);
      }
      r = kid.result;
    }
    if (a.mode === "task") continue;
    if (r === null) return null;
    if (!r.ok && !(a.mode === "catch" && r.error.kind === "script")) return failing(c, r);
  }
  switch (node.end) {
    case "throw":
      return failing(c, { ok: false, error: { kind: "script", path } });
    case "spin":
      throw new Error(`model: spinning task ${path} in the deterministic region (normalize should prevent it)`);
    case "return":
      switch (c.unconsumed) {
        case Consumed.Yes:
          pred.detFatal = true;
          return { ok: false, error: { kind: "stillHasChildren", path } };
        case Consumed.Maybe:
          return null;
        default:
          return { ok: true, value: path };
      }
  }
}
