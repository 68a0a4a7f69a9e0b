/**
 * The trace of a simulation: one line per event — the life of every task
 * (core's trace points), every packet sent, delivered or lost, every fault —
 * stamped with the virtual time and the host. Nothing in it depends on the
 * process (task uids count from 1 in each run), so the same seed gives the
 * same bytes in any process.
 */
import type * as B from "@bobbin/core";

/**
 * What `sim.trace()` returns: the lines of the trace, in order. Print it with
 * `String(trace)`; each line reads `time host event`, e.g.
 * `0.001532 server accept 10.0.0.1:7 ← 10.0.0.2:49152`.
 *
 * @example
 * ```ts
 * const sim = new Sim({ seed: 7, trace: true });
 * // …hosts…
 * await sim.run();
 * console.log(String(sim.trace()));
 * ```
 * @throws never: a trace is a finished list of lines.
 */
export class Trace implements Iterable<string> {
  /** @internal */
  constructor(
    /** The lines, without line ends. */
    readonly lines: readonly string[],
  ) {}

  /** How many lines. */
  get length(): number {
    return this.lines.length;
  }

  [Symbol.iterator](): Iterator<string> {
    return this.lines[Symbol.iterator]();
  }

  /** The whole trace, one event per line. */
  toString(): string {
    return this.lines.length === 0 ? "" : `${this.lines.join("\n")}\n`;
  }
}

/** @internal Records the lines of a trace; also core's `Tracer` for the world's tasks. */
export class TraceRecorder implements B.Tracer {
  readonly lines: string[] = [];

  constructor(
    /** The virtual time, in milliseconds. */
    private readonly now: () => number,
    /** The name of the host a task belongs to (`world` for the world's own tasks). */
    private readonly hostOf: (task: B.Task<unknown>) => string,
  ) {}

  /** Records `what` happening on `host`. */
  record(host: string, what: string): void {
    this.lines.push(`${(this.now() / 1000).toFixed(6)} ${host} ${what}`);
  }

  spawn(task: B.Task<unknown>, parent: B.Task<unknown>): void {
    this.record(this.hostOf(task), `spawn ${task} by ${parent}`);
  }

  start(task: B.Task<unknown>): void {
    this.record(this.hostOf(task), `start ${task}`);
  }

  suspend(task: B.Task<unknown>): void {
    this.record(this.hostOf(task), `suspend ${task}`);
  }

  resume(task: B.Task<unknown>): void {
    this.record(this.hostOf(task), `resume ${task}`);
  }

  cancel(task: B.Task<unknown>): void {
    this.record(this.hostOf(task), `cancel ${task}`);
  }

  end(task: B.Task<unknown>): void {
    this.record(this.hostOf(task), `end ${task} ${task.status}`);
  }
}

/** @internal One tracer for two (either may be null). */
export function bothTracers(a: B.Tracer | null, b: B.Tracer | null): B.Tracer | null {
  if (a === null || b === null) return a ?? b;
  const points = ["spawn", "start", "suspend", "resume", "cancel", "end"] as const;
  const both: B.Tracer = {};
  for (const point of points) {
    const first = a[point]?.bind(a) as ((task: B.Task<unknown>, parent?: B.Task<unknown>) => void) | undefined;
    const second = b[point]?.bind(b) as ((task: B.Task<unknown>, parent?: B.Task<unknown>) => void) | undefined;
    if (first === undefined || second === undefined) (both as Record<string, unknown>)[point] = first ?? second;
    else
      (both as Record<string, unknown>)[point] = (task: B.Task<unknown>, parent?: B.Task<unknown>) => {
        first(task, parent);
        second(task, parent);
      };
  }
  return both;
}
