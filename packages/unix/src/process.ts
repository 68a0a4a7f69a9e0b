/**
 * Child processes owned by tasks: `spawnProcess` starts one through Node's
 * `child_process` on every backend with descriptors. Its owner is the task
 * that started it: once that task ends (returns, fails or is cancelled),
 * a system task of the run — the process's reaper — terminates the process
 * if it still runs (SIGTERM, then SIGKILL after the grace period), waits for
 * it and closes its stdio; the run's end waits for what reapers cancelled
 * with it left (`drainProcesses`), so that a run settles only once its
 * processes are reaped (no zombie) and their descriptors closed.
 */
import * as childProcess from "node:child_process";
import { closeSync } from "node:fs";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { describe } from "@bobbin/core/lowlevel";
import { afterHandleClose } from "./backend/node-socket.js";
import type { Backend, Socket } from "./contract.js";
import { fromStream } from "./node-stream/from-stream.js";
import { descriptorBackend } from "./pipe.js";
import { close } from "./socket.js";

/**
 * What a child's stdin, stdout or stderr is: `"pipe"` (a socket of the
 * parent, the default), `"inherit"` (the parent's own) or `"ignore"`
 * (`/dev/null`).
 *
 * @example
 * ```ts
 * yield* spawnProcess("make", [], { stdout: "inherit", stderr: "inherit" });
 * ```
 */
export type StdioMode = "pipe" | "inherit" | "ignore";

/**
 * Options of {@link spawnProcess}.
 *
 * @example
 * ```ts
 * yield* spawnProcess("node", ["job.js"], { cwd: "/srv", env: { ...process.env, JOB: "1" }, grace: 2 });
 * ```
 */
export interface SpawnProcessOptions {
  /** The child's working directory (default: the parent's). */
  readonly cwd?: string | undefined;
  /** The child's environment (default: the parent's). */
  readonly env?: NodeJS.ProcessEnv | undefined;
  /** Its stdin (default `"pipe"`). */
  readonly stdin?: StdioMode | undefined;
  /** Its stdout (default `"pipe"`). */
  readonly stdout?: StdioMode | undefined;
  /** Its stderr (default `"pipe"`). */
  readonly stderr?: StdioMode | undefined;
  /** Seconds between the SIGTERM and the SIGKILL of a process its owner left running (default 5). */
  readonly grace?: number | undefined;
}

/**
 * How a child process ended: its exit `code`, or the `signal` that killed
 * it (the other is null), as Node's `'exit'` event says.
 *
 * @example
 * ```ts
 * const { code, signal } = yield* child.wait();
 * if (code !== 0) throw new Error(`failed: ${code ?? signal}`);
 * ```
 */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * A child process started by {@link spawnProcess}, owned by the task that
 * started it.
 *
 * @example
 * ```ts
 * const child = yield* spawnProcess("cat");
 * yield* write(child.stdin!, "hello");
 * yield* close(child.stdin!);
 * const buf = Buffer.alloc(16);
 * const n = yield* read(child.stdout!, buf);   // "hello"
 * yield* child.wait();
 * ```
 */
export interface ChildProcess {
  /** Its process id. */
  readonly pid: number;
  /** A socket writing to its stdin, when `stdin` is `"pipe"` (else null). Close it to send its end. */
  readonly stdin: Socket | null;
  /** A socket reading its stdout, when `stdout` is `"pipe"` (else null); 0 once it closed its stdout. */
  readonly stdout: Socket | null;
  /** A socket reading its stderr, when `stderr` is `"pipe"` (else null). */
  readonly stderr: Socket | null;
  /** How it ended, once it has (and Node reaped it); null while it runs. */
  readonly exit: ProcessExit | null;
  /**
   * Sends it `signal` (default `"SIGTERM"`). Returns false when it has ended already.
   * @throws TypeError for an unknown signal (Node's `ERR_UNKNOWN_SIGNAL`).
   */
  kill(signal?: NodeJS.Signals | number): boolean;
  /**
   * Waits until it has ended and been reaped; any task may wait, any number of times.
   * @throws Cancelled when the waiting task is cancelled (the process runs on).
   */
  wait(): B.Operation<ProcessExit>;
}

const MODES: readonly StdioMode[] = ["pipe", "inherit", "ignore"];
const DEFAULT_GRACE = 5;

/** The processes each task started, until it ends. */
const owned = new WeakMap<B.Task<unknown>, Set<Child>>();
let hooked = false;

/** @internal A process and what it holds of the parent. */
class Child implements ChildProcess {
  exit: ProcessExit | null = null;
  /** Whether it never started (`ENOENT`…): no 'exit' comes. */
  startFailed = false;
  /** Settles once it has ended, been reaped, and its handle is gone. */
  readonly exited: Promise<ProcessExit>;
  /** The SIGKILL that follows `terminate`'s SIGTERM. */
  #killTimer: NodeJS.Timeout | undefined = undefined;
  /** Signalled when its owner ends: the reaper takes over. */
  readonly ownerGone = new L.Trigger();

  constructor(
    readonly node: childProcess.ChildProcess,
    readonly stdin: Socket | null,
    readonly stdout: Socket | null,
    readonly stderr: Socket | null,
    readonly grace: number,
  ) {
    this.exited = new Promise((resolve) => {
      node.once("exit", (code, signal) => {
        this.exit = { code, signal };
        clearTimeout(this.#killTimer);
        // Node closes the process's handle as it reports the exit: wait() returns once it is gone.
        afterHandleClose(() => resolve(this.exit!));
      });
    });
  }

  get pid(): number {
    return this.node.pid ?? -1;
  }

  kill(signal: NodeJS.Signals | number = "SIGTERM"): boolean {
    if (this.exit !== null) return false;
    return this.node.kill(signal);
  }

  wait(): B.Operation<ProcessExit> {
    const exited = this.exited;
    return B.promise(() => exited);
  }

  /** Sends SIGTERM, then SIGKILL once the grace has passed, unless it ended before (once; nothing if it ended). */
  terminate(): void {
    if (!this.running || this.#killTimer !== undefined) return;
    this.kill("SIGTERM");
    this.#killTimer = setTimeout(() => this.kill("SIGKILL"), this.grace * 1000);
  }

  /** Whether it still runs (or has not been reaped yet). */
  get running(): boolean {
    return this.exit === null && !this.startFailed;
  }

  /** Begins closing its stdio sockets, without waiting. */
  disposeStdio(): void {
    for (const s of [this.stdin, this.stdout, this.stderr]) s?.[Symbol.dispose]();
  }

  /** Closes its stdio sockets (their descriptors with them), waiting until they are gone. */
  *closeStdio(): Generator<B.Instruction, void, unknown> {
    const open = [this.stdin, this.stdout, this.stderr].filter((s) => s !== null);
    for (const s of open) yield* close(s);
    // A socket over a Node pipe is closed at its 'close' event; its handle goes in the loop's next close phase.
    if (open.some((s) => s.kind === "stream")) yield* B.promise(() => new Promise<void>((resolve) => afterHandleClose(resolve)));
  }

  toString(): string {
    return `ChildProcess(${this.pid}${this.exit === null ? "" : ", ended"})`;
  }
}

/** Wakes the reapers of the processes of each task that ends. */
function followOwners(): void {
  if (hooked) return;
  hooked = true;
  L.onExit((task) => {
    const children = owned.get(task);
    if (children === undefined) return undefined;
    owned.delete(task);
    for (const child of children) child.ownerGone.signal();
    return undefined;
  });
}

/**
 * A process's reaper, a system task of the run: once the owner has ended,
 * a process still running is terminated (SIGTERM, then SIGKILL after the
 * grace period) and waited for, and its stdio sockets are closed. When the
 * run ends first (this task is cancelled), the termination goes on and the
 * run's end waits for it (`drainProcesses`); in a worker domain the process
 * is killed (SIGKILL) then.
 */
function* reap(child: Child, live: Set<Child>): Generator<B.Instruction, void, unknown> {
  try {
    yield* child.ownerGone.wait();
    if (child.running) {
      child.terminate();
      yield* child.wait();
    }
    yield* child.closeStdio();
    live.delete(child);
  } finally {
    if (live.has(child)) {
      child.terminate();
      // A worker domain's run has no drain after it, and its thread is stopped
      // within the run's cancelGraceMs: a process still running then would
      // outlive the run, never reaped. The run's end cuts its grace there.
      if (B.Domain.self() !== 0) child.kill("SIGKILL");
      child.disposeStdio();
    }
  }
}

/** The processes of each backend's run not reaped yet, with their reapers. */
const processes = new WeakMap<Backend, Set<Child>>();

/**
 * @internal The run on `backend` has ended: its processes still there are
 * terminated (SIGTERM, SIGKILL after their grace), their stdio closed, and
 * this settles once Node has reaped them and their handles are gone.
 */
export async function drainProcesses(backend: Backend): Promise<void> {
  const live = processes.get(backend);
  if (live === undefined) return;
  processes.delete(backend);
  await Promise.all(
    [...live].map(async (child) => {
      child.terminate();
      child.disposeStdio();
      if (!child.startFailed) await child.exited;
    }),
  );
  await new Promise<void>((resolve) => afterHandleClose(resolve));
}

function checkArgs(command: unknown, args: unknown, options: unknown): SpawnProcessOptions {
  if (typeof command !== "string" || command.length === 0)
    throw new TypeError(`spawnProcess(command) expects a command (a non-empty string), got ${describe(command)}`);
  if (!Array.isArray(args) || !args.every((a) => typeof a === "string"))
    throw new TypeError(`spawnProcess(command, args) expects args as an array of strings, got ${describe(args)}`);
  if (options === null || typeof options !== "object")
    throw new TypeError(
      `spawnProcess(command, args, options) expects options { cwd, env, stdin, stdout, stderr, grace }, got ${describe(options)}`,
    );
  const o = options as SpawnProcessOptions;
  for (const name of ["stdin", "stdout", "stderr"] as const) {
    const mode = o[name];
    if (mode !== undefined && !MODES.includes(mode))
      throw new TypeError(`spawnProcess(command, args, { ${name} }): ${name} must be "pipe", "inherit" or "ignore", got ${describe(mode)}`);
  }
  if (o.grace !== undefined && (typeof o.grace !== "number" || Number.isNaN(o.grace) || o.grace < 0))
    throw new RangeError(`spawnProcess(command, args, { grace }): grace must be a number of seconds ≥ 0, got ${describe(o.grace)}`);
  return o;
}

/** One stdio entry of the child: the parent's socket (for a pipe of the backend's), and what Node's spawn is given. */
type Stdio = { parent: Socket | null; child: StdioMode | number };

/** A pipe of the backend's own (`socketPair`): the parent's end adopted, the child's end a descriptor for the child. */
function stdioOf(backend: Backend, mode: StdioMode): Stdio {
  if (mode !== "pipe" || backend.socketPair === undefined || backend.adoptStream === undefined) return { parent: null, child: mode };
  const [mine, theirs] = backend.socketPair();
  try {
    return { parent: backend.adoptStream(mine), child: theirs };
  } catch (error) {
    closeSync(theirs);
    throw error;
  }
}

/**
 * Starts `command` with `args` as a child process owned by the calling
 * task, and returns once it has started. `stdin`, `stdout` and `stderr`
 * are sockets of the parent for each stream in `"pipe"` mode: connected
 * stream sockets of the backend on the native and io_uring backends (a
 * `socketpair(2)` whose other end the child gets), sockets over Node's own
 * pipes (as `fromStream` makes) on the libuv backend. Wait for it with
 * `wait()`. Once the owner ends — it returned without waiting, failed, or
 * was cancelled — a process still running gets SIGTERM, then SIGKILL after
 * `grace` seconds; its stdio sockets are closed then; the run settles only
 * once it has ended and Node has reaped it.
 *
 * @example
 * ```ts
 * import { read, run, spawnProcess } from "@bobbin/unix";
 *
 * await run(function* () {
 *   const child = yield* spawnProcess("node", ["-e", "console.log('hi')"], { stdin: "ignore" });
 *   const buf = Buffer.alloc(64);
 *   const n = yield* read(child.stdout!, buf);
 *   console.log(buf.toString("utf8", 0, n).trim(), yield* child.wait());   // hi { code: 0, signal: null }
 * });
 * ```
 * @throws the system's error when the command cannot start (`ENOENT`, `EACCES`), to this task only.
 * @throws TypeError for a bad command, args or options; RangeError for a bad `grace`.
 * @throws Unsupported on a backend without processes (`@bobbin/sim`'s).
 * @throws Cancelled when the task is cancelled while the process starts (the process is killed).
 */
export function spawnProcess(command: string, args: readonly string[] = [], options: SpawnProcessOptions = {}): B.Operation<ChildProcess> {
  const o = checkArgs(command, args, options);
  const backend = descriptorBackend("spawnProcess()");
  const owner = B.self();
  return started(backend, owner, command, args, o);
}

function* started(
  backend: Backend,
  owner: B.Task<unknown>,
  command: string,
  args: readonly string[],
  o: SpawnProcessOptions,
): Generator<B.Instruction, ChildProcess, unknown> {
  const stdio: Stdio[] = [];
  let node: childProcess.ChildProcess;
  try {
    for (const mode of [o.stdin, o.stdout, o.stderr]) stdio.push(stdioOf(backend, mode ?? "pipe"));
    node = childProcess.spawn(command, [...args], { cwd: o.cwd, env: o.env, stdio: stdio.map((s) => s.child) });
  } catch (error) {
    for (const s of stdio) s.parent?.[Symbol.dispose]();
    throw error;
  } finally {
    // The child has its ends now (or never will): the parent's copies go.
    for (const s of stdio) if (typeof s.child === "number") closeSync(s.child);
  }
  const sockets = stdio.map((s, i) => {
    if (s.parent !== null) return s.parent;
    const stream = node.stdio[i];
    return stream == null ? null : fromStream(stream);
  });
  const child = new Child(node, sockets[0]!, sockets[1]!, sockets[2]!, o.grace ?? DEFAULT_GRACE);
  followOwners();
  let children = owned.get(owner);
  if (children === undefined) owned.set(owner, (children = new Set()));
  children.add(child);
  let live = processes.get(backend);
  if (live === undefined) processes.set(backend, (live = new Set()));
  live.add(child);
  L.spawnSystem(reap, child, live);
  const failed = new Promise<never>((_, reject) => node.once("error", reject));
  failed.catch(() => {}); // an 'error' after 'spawn' (a failed kill) is not the start's failure
  const spawned = new Promise<void>((resolve) => node.once("spawn", () => resolve()));
  try {
    yield* B.promise(() => Promise.race([spawned, failed]));
  } catch (error) {
    // It never started (a cancelled start is the owner's end: the reaper kills it).
    if (!(error instanceof B.Cancelled)) {
      child.startFailed = true;
      yield* child.closeStdio();
    }
    throw error;
  }
  return child;
}
