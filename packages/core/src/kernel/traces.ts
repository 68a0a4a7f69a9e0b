/**
 * Traces across tasks (`run({ traces })`): where each task was spawned and
 * where it last suspended, so that an error leaving a task for its parent
 * carries the chain of tasks it crossed, as extra lines of its stack, and a
 * dump says where each waiting task waits.
 *
 * A place is a stack captured when it happens (`Error.captureStackTrace`,
 * whose text V8 makes only when it is read) and shown as its first frame
 * outside Bobbin's packages: the user's `B.spawn(…)` or `yield*`. Capturing costs about a
 * microsecond a time, at each spawn and each park, which is why it is a
 * switch (see run.ts for its default).
 */
import { dirname, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Place, Task } from "./task.js";
import { coldOf, familyOf } from "./tree.js";

/**
 * The folder of Bobbin's packages: core's parent (`packages/` in the
 * repository). This module is `src/kernel/traces.ts`, or a chunk of a build
 * (`dist/`, `dist-dev/`): core is two or three folders up.
 */
const here = fileURLToPath(import.meta.url);
const packages = dirname(dirname(dirname(/[\\/]src[\\/]kernel[\\/][^\\/]+$/.test(here) ? dirname(here) : here)));
/** A package's sources (where source maps lead too) or builds, below `packages`. */
const PACKAGE_FILE = /^[^\\/]+[\\/](src|dist[^\\/]*)[\\/]/;
/** An installed Bobbin package, wherever the package manager put it. */
const INSTALLED = /[\\/]node_modules[\\/]@bobbin[\\/]/;

/**
 * Whether a frame's file is Bobbin's own (core's, or a package's such as
 * `@bobbin/unix`'s `read` or `@bobbin/sync`'s `lock`), not the user's.
 */
function isBobbin(file: string): boolean {
  return (file.startsWith(packages + sep) && PACKAGE_FILE.test(file.slice(packages.length + 1))) || INSTALLED.test(file);
}

/** Frames enough to reach the user's beyond Bobbin's own. */
const DEPTH = 24;

function capture(): Place {
  const place: Place = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = DEPTH;
  Error.captureStackTrace(place, capture);
  Error.stackTraceLimit = limit;
  return place;
}

const FRAME = /^\s*at (?:(.*?) \()?(.*?):(\d+):\d+\)?$/;

/** The first frame of `place` outside Bobbin and Node's internals, as `file:line` (`file` relative to the working directory). */
function where(place: Place | null): string | null {
  const stack = place?.stack;
  if (stack === undefined) return null;
  const cwd = `${process.cwd()}/`;
  for (const line of stack.split("\n").slice(1)) {
    const m = FRAME.exec(line);
    if (m === null) continue;
    const file = m[2]!.startsWith("file://") ? fileURLToPath(m[2]!) : m[2]!;
    if (isBobbin(file) || file.startsWith("node:") || !file.includes("/")) continue;
    return `${file.startsWith(cwd) ? file.slice(cwd.length) : file}:${m[3]}`;
  }
  return null;
}

/** How the line of a task an error crossed begins (as V8's own lines do: `    at `). */
const TASK_LINE = "    at task ";

/** The errors given a line for a task already, so that an error awaited again is not told twice. */
const told = new WeakMap<object, Task>();

/** @internal The traces of one kernel's tasks (null on the kernel when the run keeps none). */
export class Traces {
  /** A task was made: where (its spawner's `B.spawn`). */
  spawned(task: Task): void {
    familyOf(task).spawnedAt = capture();
  }

  /** The running task parks: where (its `yield*`). */
  parked(task: Task): void {
    familyOf(task).suspendedAt = capture();
  }

  /**
   * `parent` took the outcome of `child`, which failed: the error gets a
   * line naming the child, where it was spawned and where it was awaited
   * (here, if the parent is running; otherwise where it suspended).
   */
  failedChildTaken(parent: Task, child: Task, error: unknown, parentRunning: boolean): void {
    if (error === null || typeof error !== "object" || told.get(error) === child) return;
    const stack = (error as { stack?: unknown }).stack;
    if (typeof stack !== "string") return;
    told.set(error, child);
    const spawned = where(coldOf(child)?.spawnedAt ?? null);
    const awaited = where(parentRunning ? capture() : (coldOf(parent)?.suspendedAt ?? null));
    const line = `${TASK_LINE}${child}${spawned === null ? "" : ` (spawned at ${spawned})`}${awaited === null ? "" : `, awaited at ${awaited}`}`;
    try {
      (error as { stack: string }).stack = `${stack}\n${line}`;
    } catch {
      // A frozen error keeps its stack as it is: the trace is a help, never a new failure.
    }
  }
}

/** @internal Where a parked task waits (`file:line` of its `yield*`), if the run keeps traces. */
export function suspensionPoint(task: Task): string | null {
  return where(coldOf(task)?.suspendedAt ?? null);
}
