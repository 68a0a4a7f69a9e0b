/**
 * The trace of a simulation: one line per event — the life of every task
 * (core's trace points), every packet sent, delivered or lost, every fault —
 * stamped with the virtual time and the host. Nothing in it depends on the
 * process (task uids count from 1 in each run), so the same seed gives the
 * same bytes in any process.
 */
import type * as B from "@bobbin/core";
import type * as L from "@bobbin/core/lowlevel";

/** @internal What an entry of the trace is about, for drawing it (`Trace#toChromeTrace`). */
export type EntryKind = "spawn" | "start" | "suspend" | "resume" | "cancel" | "end" | "send" | "recv" | "note";

/** @internal One event of the trace, as data: its line says the same in words. */
export interface TraceEntry {
  /** The virtual time, in ms. */
  readonly at: number;
  readonly host: string;
  readonly kind: EntryKind;
  /** The task it is about (task events). */
  readonly task?: { readonly uid: number; readonly name: string };
  /** The packet's number in this trace (send and recv). */
  readonly packet?: number;
  /** What the line says after the host. */
  readonly what: string;
}

/** The track (tid) of a host's events that are no task's: packets, faults. */
const HOST_TRACK = 0;

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
    /** @internal The same events as data. */
    readonly entries: readonly TraceEntry[],
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

  /**
   * The trace in the Chrome Trace Event format (as `B.chromeTrace` makes for
   * a flight recorder), in virtual time: write it as JSON and open it in
   * Perfetto's UI or `chrome://tracing`. Each host is a process; each task
   * a track with a slice for its life and one per wait (labelled `waits`:
   * the simulation's tracer hears that a task parked, not on what); the
   * host's own track has a slice per packet sent or received and per fault;
   * a packet delivered is an arrow from its send to its receipt. A task
   * step takes no virtual time, so what the timeline shows is waits and
   * messages.
   *
   * @example
   * ```ts
   * const sim = new Sim({ seed: 7, trace: true });
   * // …hosts, run…
   * writeFileSync("sim.trace.json", JSON.stringify(sim.trace().toChromeTrace()));
   * ```
   * @throws never.
   */
  toChromeTrace(): B.ChromeTrace {
    const events: B.ChromeTraceEvent[] = [];
    const pids = new Map<string, number>();
    const pidOf = (host: string): number => {
      let pid = pids.get(host);
      if (pid === undefined) {
        pids.set(host, (pid = pids.size));
        events.push({ ph: "M", name: "process_name", pid, tid: HOST_TRACK, ts: 0, args: { name: host } });
        events.push({ ph: "M", name: "thread_name", pid, tid: HOST_TRACK, ts: 0, args: { name: `${host} (packets, faults)` } });
      }
      return pid;
    };
    const us = (ms: number): number => Math.round(ms * 1000);
    const end = this.entries.length === 0 ? 0 : this.entries[this.entries.length - 1]!.at;
    /** Open slices of each task: its life, and its wait; by `pid:uid`. */
    const lives = new Map<string, TraceEntry>();
    const waits = new Map<string, TraceEntry>();
    const received = new Set(this.entries.filter((e) => e.kind === "recv").map((e) => e.packet));
    const slice = (from: TraceEntry, to: number, name: string, tid: number, args: Record<string, unknown>): void => {
      events.push({ ph: "X", name, pid: pidOf(from.host), tid, ts: us(from.at), dur: us(to) - us(from.at), args });
    };
    for (const e of this.entries) {
      const pid = pidOf(e.host);
      const key = e.task === undefined ? "" : `${pid}:${e.task.uid}`;
      const label = e.task === undefined ? "" : `${e.task.name}#${e.task.uid}`;
      switch (e.kind) {
        case "spawn":
        case "start":
          if (lives.has(key)) break;
          lives.set(key, e);
          events.push({ ph: "M", name: "thread_name", pid, tid: e.task!.uid, ts: 0, args: { name: label } });
          break;
        case "suspend":
          waits.set(key, e);
          break;
        case "resume": {
          const wait = waits.get(key);
          if (wait === undefined) break;
          waits.delete(key);
          slice(wait, e.at, "waits", e.task!.uid, { task: label });
          break;
        }
        case "end": {
          const life = lives.get(key);
          if (life === undefined) break;
          lives.delete(key);
          slice(life, e.at, label, e.task!.uid, { ended: e.what });
          break;
        }
        case "send":
        case "recv": {
          events.push({ ph: "X", name: e.what, cat: e.kind, pid, tid: HOST_TRACK, ts: us(e.at), dur: 0 });
          if (!received.has(e.packet)) break;
          const flow = { name: "packet", cat: "packet", id: e.packet!, pid, tid: HOST_TRACK, ts: us(e.at) };
          events.push(e.kind === "send" ? { ...flow, ph: "s" } : { ...flow, ph: "f", bp: "e" });
          break;
        }
        default:
          events.push({ ph: "i", s: "t", name: e.what, cat: e.kind, pid, tid: HOST_TRACK, ts: us(e.at) });
      }
    }
    for (const [key, wait] of waits) if (lives.has(key)) slice(wait, end, "waits", wait.task!.uid, { unfinished: true });
    for (const life of lives.values()) slice(life, end, `${life.task!.name}#${life.task!.uid}`, life.task!.uid, { unfinished: true });
    return { traceEvents: events, displayTimeUnit: "ms" };
  }
}

/** @internal Records the lines of a trace; also core's `Tracer` for the world's tasks. */
export class TraceRecorder implements L.Tracer {
  readonly lines: string[] = [];
  readonly entries: TraceEntry[] = [];
  /** Each packet's number, from its send. */
  private readonly packets = new WeakMap<object, number>();

  constructor(
    /** The virtual time, in milliseconds. */
    private readonly now: () => number,
    /** The name of the host a task belongs to (`world` for the world's own tasks). */
    private readonly hostOf: (task: B.Task<unknown>) => string,
  ) {}

  /** Records `what` happening on `host`. */
  record(host: string, what: string): void {
    this.add(host, "note", what);
  }

  /** Records a packet event on `host`: `kind` and the packet as it describes itself, then `more`. */
  packet(host: string, kind: "send" | "recv" | "hold" | "lose" | "drop", packet: { describe(): string }, more = ""): void {
    let n = this.packets.get(packet);
    if (n === undefined) this.packets.set(packet, (n = this.entries.length));
    const what = `${kind} ${packet.describe()}${more}`;
    this.add(host, kind === "send" || kind === "recv" ? kind : "note", what, undefined, n);
  }

  private add(host: string, kind: EntryKind, what: string, task?: B.Task<unknown>, packet?: number): void {
    const at = this.now();
    this.lines.push(`${(at / 1000).toFixed(6)} ${host} ${what}`);
    const entry: TraceEntry = { at, host, kind, what };
    this.entries.push(
      task !== undefined ? { ...entry, task: { uid: task.uid, name: task.name } } : packet !== undefined ? { ...entry, packet } : entry,
    );
  }

  spawn(task: B.Task<unknown>, parent: B.Task<unknown>): void {
    this.add(this.hostOf(task), "spawn", `spawn ${task} by ${parent}`, task);
  }

  start(task: B.Task<unknown>): void {
    this.add(this.hostOf(task), "start", `start ${task}`, task);
  }

  suspend(task: B.Task<unknown>): void {
    this.add(this.hostOf(task), "suspend", `suspend ${task}`, task);
  }

  resume(task: B.Task<unknown>): void {
    this.add(this.hostOf(task), "resume", `resume ${task}`, task);
  }

  cancel(task: B.Task<unknown>): void {
    this.add(this.hostOf(task), "cancel", `cancel ${task}`, task);
  }

  end(task: B.Task<unknown>): void {
    this.add(this.hostOf(task), "end", `end ${task} ${task.status}`, task);
  }
}

/** @internal One tracer for two (either may be null). */
export function bothTracers(a: L.Tracer | null, b: L.Tracer | null): L.Tracer | null {
  if (a === null || b === null) return a ?? b;
  const points = ["spawn", "start", "suspend", "resume", "cancel", "end"] as const;
  const both: L.Tracer = {};
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
