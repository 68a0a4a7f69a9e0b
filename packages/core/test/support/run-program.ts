/**
 * Runs a program of the model-based test (`support/model.ts`) on the real
 * kernel and records what happened: every step of every task logged around
 * the real operation, the exit and spawn hooks, the tracer's cancellation
 * requests, `protect`'s handlers and the events backend's `select`s.
 */
import * as B from "../../src/index.js";
import * as L from "../../src/lowlevel/index.js";
import { ManualEvents } from "./helpers.js";
import { type Action, type Ev, HandlerError, mayNeverEnd, type Observation, PROTECTED, type Script, ScriptError } from "./model.js";

/** How a program is run: the run's seed, its polling period, and who picks the next ready task. */
export interface RunParams {
  readonly seed: number;
  readonly pollEvery: number;
  /** "fifo": the kernel's own order; "random": a seeded scheduling policy. */
  readonly policy: "fifo" | "random";
}

type Gen<T> = Generator<B.Instruction, T, unknown>;

/** `ManualEvents` that logs each `select`, and stops a run none of whose tasks can be woken any more. */
class LoggedEvents extends ManualEvents {
  constructor(
    private readonly log: Ev[],
    private readonly stuck: () => void,
  ) {
    super();
  }

  override select(block: boolean, cancelled: readonly number[]): L.Signal[] {
    const fired = this.ready.map((s) => L.uid(s));
    const signals = super.select(block, cancelled);
    this.log.push({ k: "select", block, cancelled: [...cancelled], fired });
    // Nothing is ready and nothing is running: in these programs, nothing ever will be.
    if (block && fired.length === 0 && cancelled.length === 0) this.stuck();
    return signals;
  }
}

interface Ctx {
  readonly log: Ev[];
  readonly backend: LoggedEvents;
  readonly tasks: Map<string, B.Task<unknown>>;
  readonly paths: Map<B.Task<unknown>, string>;
  readonly scripts: Map<string, Script>;
  readonly triggers: Map<string, L.Trigger>;
  readonly collectors: Map<string, B.Orphans<string>>;
}

/** What an action's `end` event records. */
type Ended = { value?: unknown; status?: B.TaskStatus };

/** A task of the program: logs every step of its script around the real operations. */
function* taskBody(ctx: Ctx, node: Script, path: string): Gen<string> {
  const self = B.self();
  ctx.tasks.set(path, self);
  ctx.log.push({ k: "start", path, uid: self.uid });
  try {
    const value = yield* script(ctx, node, path);
    ctx.log.push({ k: "bodyEnd", path, ok: true, value });
    return value;
  } catch (error) {
    ctx.log.push({ k: "bodyEnd", path, ok: false, error });
    throw error;
  }
}

function* script(ctx: Ctx, node: Script, path: string): Gen<string> {
  const log = ctx.log;
  const kids: B.Task<string>[] = [];
  try {
    for (let i = 0; i < node.actions.length; i++) {
      const a = node.actions[i]!;
      if (a.t === "spawn") {
        const child = `${path}.${kids.length}`;
        ctx.scripts.set(child, a.child);
        ctx.triggers.set(child, new L.Trigger());
        const t = a.orphan
          ? B.spawn({ orphans: collectorOf(ctx, path) }, taskBody, ctx, a.child, child)
          : B.spawn(taskBody, ctx, a.child, child);
        kids.push(t);
        ctx.tasks.set(child, t);
        ctx.paths.set(t, child);
        log.push({ k: "spawned", path, i, child, uid: t.uid, orphan: a.orphan });
        continue;
      }
      const syscalls = a.t === "syscall" ? (a.mode === "early" ? [L.syscall("early"), L.syscall("wake")] : [L.syscall(a.mode)]) : [];
      log.push({ k: "begin", path, i, uids: syscalls.length === 0 ? undefined : syscalls.map((s) => L.uid(s)) });
      try {
        const ended = yield* perform(ctx, a, i, path, kids, syscalls);
        log.push({ k: "end", path, i, threw: false, ...ended });
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

/** One action (not a spawn) on the real kernel. */
function* perform(
  ctx: Ctx,
  a: Exclude<Action, { t: "spawn" }>,
  i: number,
  path: string,
  kids: readonly B.Task<string>[],
  syscalls: readonly L.Syscall[],
): Gen<Ended> {
  switch (a.t) {
    case "yield":
      for (let n = 0; n < a.n; n++) yield* B.yieldNow();
      return {};
    case "await":
      return { value: a.mode === "task" ? yield* B.awaitTask(kids[a.k]!) : yield* B.awaitExn(kids[a.k]!) };
    case "cancel":
      yield* B.cancel(kids[a.k]!);
      return { status: kids[a.k]!.status };
    case "join": {
      const ts = a.ks.map((k) => kids[k]!);
      return { value: a.mode === "all" ? yield* B.awaitAll(ts) : a.mode === "one" ? yield* B.awaitOne(ts) : yield* B.awaitFirst(ts) };
    }
    case "wait":
      yield* ctx.triggers.get(path)!.wait();
      return {};
    case "signal":
      return { value: ctx.triggers.get(`${path}.${a.k}`)!.signal() };
    case "syscall": {
      const makeReady = (s: L.Syscall): void => void ctx.backend.ready.push(s);
      const [s, wake] = syscalls;
      if (a.mode === "never") yield* L.suspend(s!);
      else if (a.mode === "ready") yield* L.suspend(s!, makeReady);
      else {
        // Signalled by the select that wakes the task from `wake`, before it suspends on it.
        makeReady(s!);
        yield* L.suspend(wake!, makeReady);
        yield* L.suspend(s!);
      }
      return {};
    }
    case "protect": {
      const handlers: B.ProtectHandlers = {
        onCancellation() {
          if (!a.throwing) {
            ctx.log.push({ k: "onCancellation", owner: path });
            return;
          }
          const error = new HandlerError(path);
          ctx.log.push({ k: "onCancellation", owner: path, error });
          throw error;
        },
        finally: (cancelled) => void ctx.log.push({ k: "protectFinally", path, i, cancelled }),
      };
      return { value: yield* B.protect(handlers, protectedBody, a.yields) };
    }
    case "care": {
      const t = B.care(collectorOf(ctx, path));
      ctx.log.push({ k: "mid", path, i, took: t ? ctx.paths.get(t) : t, op: t ? "await" : null });
      return t ? { value: yield* B.awaitTask(t) } : {};
    }
    case "take": {
      const t = B.take(collectorOf(ctx, path));
      const took = t === undefined ? undefined : ctx.paths.get(t)!;
      // Awaiting a task that may never end would hang the program: cancel it instead.
      const op =
        took === undefined
          ? null
          : a.by === "cancel" || mayNeverEnd(ctx.scripts.get(took)!, ctx.triggers.get(took)!.isSignalled)
            ? "cancel"
            : "await";
      ctx.log.push({ k: "mid", path, i, took, op });
      if (t === undefined) return {};
      if (op === "await") return { value: yield* B.awaitTask(t) };
      yield* B.cancel(t);
      return { status: t.status };
    }
    case "get":
      return { value: yield* B.get(collectorOf(ctx, path)) };
    case "drain":
      return { value: yield* B.drain(collectorOf(ctx, path)) };
  }
}

function* protectedBody(yields: number): Gen<string> {
  for (let n = 0; n < yields; n++) yield* B.yieldNow();
  return PROTECTED;
}

function collectorOf(ctx: Ctx, path: string): B.Orphans<string> {
  let collector = ctx.collectors.get(path);
  if (collector === undefined) ctx.collectors.set(path, (collector = B.orphans<string>()));
  return collector;
}

/** A seeded scheduling policy: any ready task may run next (mulberry32). */
function randomPolicy(seed: number): L.SchedulingPolicy {
  let state = seed >>> 0;
  return {
    pick(ready) {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = Math.imul(state ^ (state >>> 15), state | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) % ready.length;
    },
  };
}

/**
 * A run still going after this long is reported as a hang (and cancelled
 * through its signal). A run that hangs waiting is found by its state (the
 * backend's blocking select with nothing ready); this bounds the others (a
 * run that never stops stepping). A program runs in milliseconds: the bound
 * is far beyond what a loaded machine makes of that.
 */
export const HANG_MS = 5000;

/** Runs a program on the real kernel and records what happened. */
export async function runProgram(program: Script, params: RunParams): Promise<Observation> {
  const log: Ev[] = [];
  const abort = new AbortController();
  const ctx: Ctx = {
    log,
    backend: new LoggedEvents(log, () => abort.abort(new Error("every task waits and nothing can wake one"))),
    tasks: new Map(),
    paths: new Map(),
    scripts: new Map(),
    triggers: new Map(),
    collectors: new Map(),
  };
  const spawnHook: { child: number; parent: number; childParent: number | null }[] = [];
  const offSpawn = L.onSpawn(
    (child, parent) => void spawnHook.push({ child: child.uid, parent: parent.uid, childParent: child.parent?.uid ?? null }),
  );
  const offExit = L.onExit((task, ending) => {
    log.push({ k: "exit", uid: task.uid, ending, parentUid: task.parent?.uid ?? null });
    return undefined;
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const hang = new Promise<"hang">((resolve) => {
      timer = setTimeout(() => {
        abort.abort(new Error("hang"));
        setTimeout(() => resolve("hang"), 500).unref();
      }, HANG_MS);
    });
    const settled = L.runKernel(() => taskBody(ctx, program, "0"), {
      seed: params.seed,
      pollEvery: params.pollEvery,
      signal: abort.signal,
      events: () => ctx.backend,
      tracer: { cancel: (task) => void log.push({ k: "cancelRequest", uid: task.uid }) },
      ...(params.policy === "random" ? { policy: randomPolicy(params.seed) } : {}),
    }).then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    const run = await Promise.race([settled, hang]);
    const exitsAtSettle = log.filter((e) => e.k === "exit").length;
    const hung = run === "hang" || abort.signal.aborted;
    const statuses = new Map([...ctx.tasks].map(([path, t]) => [path, t.status] as const));
    return {
      events: log,
      spawnHook,
      run: hung ? { hung: true } : run,
      statuses,
      exitsAtSettle,
      finalised: ctx.backend.finalised,
      fifo: params.policy === "fifo",
    };
  } finally {
    clearTimeout(timer);
    offSpawn();
    offExit();
  }
}
