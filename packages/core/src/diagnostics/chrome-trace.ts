/**
 * `chromeTrace`: the flight recorder as a timeline, in the Chrome Trace
 * Event format (JSON), which Perfetto's UI (ui.perfetto.dev) and
 * `chrome://tracing` open. Each domain is a process; its first track shows
 * which task runs, one slice per step; each task has a track of its own
 * with its waits, labelled with what it waited on; a wake by another task
 * is an arrow (a flow) from the waker's step to the woken task's next step.
 * The shapes below are the format's, so that other timelines (@bobbin/sim's)
 * make the same kind of file.
 */
import type { DomainFlight, FlightEvent, FlightTask } from "../kernel/flight.js";
import type { Dump } from "./dump-data.js";

/**
 * One event of a Chrome trace: `ph` is its phase — `X` a slice (`ts` to
 * `ts + dur`), `i` an instant, `s`/`f` the two ends of a flow (an arrow
 * between slices, paired by `id`), `M` metadata (names of processes and
 * tracks). Times are in microseconds.
 *
 * @example
 * ```ts
 * const slices = trace.traceEvents.filter((e: B.ChromeTraceEvent) => e.ph === "X");
 * ```
 */
export interface ChromeTraceEvent {
  readonly ph: "X" | "i" | "s" | "f" | "M";
  readonly name: string;
  readonly pid: number;
  readonly tid: number;
  readonly ts: number;
  readonly dur?: number;
  readonly cat?: string;
  readonly id?: number;
  /** `f`: binds to the slice that encloses it (`"e"`). */
  readonly bp?: "e";
  /** `i`: the instant's scope (`"t"`: its track). */
  readonly s?: "t";
  readonly args?: Readonly<Record<string, unknown>>;
}

/**
 * A trace in the Chrome Trace Event format: write it as JSON
 * (`JSON.stringify(trace)`) and open the file in Perfetto's UI or
 * `chrome://tracing`.
 *
 * @example
 * ```ts
 * writeFileSync("run.trace.json", JSON.stringify(B.chromeTrace(await B.dump())));
 * ```
 */
export interface ChromeTrace {
  readonly traceEvents: readonly ChromeTraceEvent[];
  readonly displayTimeUnit: "ms";
}

/** The track of a domain's steps (a task's own track is its uid, from 1). */
const STEPS_TRACK = 0;

/**
 * Draws the flight recorders of a dump (or the ones given) as a Chrome
 * trace: a process per domain, a track of its steps (a slice per step,
 * named after the task), a track per task with its waits (labelled with
 * what it waited on) and instants for its spawn, cancellation and end, and
 * an arrow from a step that woke a task to that task's next step. Times
 * count from the first event recorded. A wait or step still going when the
 * ring was read ends there.
 *
 * @example
 * ```ts
 * await B.run(main, { flightRecorder: 10_000, dumpSignal: "SIGUSR2" });
 * // in main, when something looks wrong:
 * const trace = B.chromeTrace(yield* B.promise(() => B.dump()));
 * writeFileSync("bobbin.trace.json", JSON.stringify(trace));
 * ```
 * @throws TypeError when given neither a dump nor an array of flight recorders.
 */
export function chromeTrace(source: Dump | readonly DomainFlight[]): ChromeTrace {
  const flights = Array.isArray(source) ? source : (source as Dump | null)?.flight;
  if (!Array.isArray(flights)) {
    throw new TypeError("chromeTrace(source) expects what B.dump() resolves to, or its `flight` array");
  }
  const origin = Math.min(...flights.map((f: DomainFlight) => f.events[0]?.at ?? Number.POSITIVE_INFINITY));
  const drawing = new Drawing(Number.isFinite(origin) ? origin : 0);
  for (const flight of flights as readonly DomainFlight[]) drawing.flight(flight);
  return { traceEvents: drawing.finish(), displayTimeUnit: "ms" };
}

/** A task's label: `name#uid`. */
function label(task: FlightTask): string {
  return `${task.name}#${task.uid}`;
}

/** Turns one recorder after another into trace events. */
class Drawing {
  private readonly events: ChromeTraceEvent[] = [];
  private readonly named = new Set<string>();
  private nextFlow = 1;

  constructor(private readonly origin: number) {}

  /** Microseconds since the first event, to the nanosecond (the format allows fractions). */
  private us(at: number): number {
    return Math.round((at - this.origin) * 1e6) / 1000;
  }

  flight(flight: DomainFlight): void {
    const events = flight.events;
    const end = events.length === 0 ? this.origin : events[events.length - 1]!.at;
    /** The step running, and since when. */
    let running: FlightEvent | null = null;
    /** Each parked task's park event, by `domain:uid`. */
    const parked = new Map<string, FlightEvent>();
    /** Wakes by another task whose woken task has not run since, by `domain:uid`. */
    const arrows = new Map<string, ChromeTraceEvent>();
    const stepEnds = (at: number): void => {
      if (running === null) return;
      this.slice(running.domain, STEPS_TRACK, label(running.task!), running.at, at, { uid: running.task!.uid });
      running = null;
    };
    for (const e of events) {
      this.nameDomain(e.domain);
      const key = e.task === null ? "" : `${e.domain}:${e.task.uid}`;
      switch (e.kind) {
        case "run": {
          stepEnds(e.at);
          running = e;
          const arrow = arrows.get(key);
          if (arrow !== undefined) {
            arrows.delete(key);
            this.events.push(arrow, { ...arrow, ph: "f", bp: "e", pid: e.domain, tid: STEPS_TRACK, ts: this.us(e.at) });
          }
          break;
        }
        case "idle":
          stepEnds(e.at);
          break;
        case "park":
          parked.set(key, e);
          break;
        case "wake": {
          const park = parked.get(key);
          if (park !== undefined) {
            parked.delete(key);
            this.wait(park, e.at);
          }
          if (e.by !== null) {
            const id = this.nextFlow++;
            const from = (running as FlightEvent | null)?.domain ?? e.domain;
            arrows.set(key, { ph: "s", name: "wake", cat: "wake", id, pid: from, tid: STEPS_TRACK, ts: this.us(e.at) });
          }
          break;
        }
        default:
          this.instant(e);
      }
    }
    stepEnds(end);
    for (const park of parked.values()) this.wait(park, end, true);
  }

  private wait(park: FlightEvent, until: number, unfinished = false): void {
    const task = park.task!;
    this.nameTask(park.domain, task);
    const args = unfinished ? { waitsOn: park.detail, unfinished: true } : { waitsOn: park.detail };
    this.slice(park.domain, task.uid, `waits: ${park.detail}`, park.at, until, args);
  }

  private instant(e: FlightEvent): void {
    const tid = e.task === null ? STEPS_TRACK : e.task.uid;
    if (e.task !== null) this.nameTask(e.domain, e.task);
    const name = e.task === null ? `${e.kind} ${e.detail ?? ""}`.trim() : `${e.kind} ${label(e.task)}`;
    const args: Record<string, unknown> = {};
    if (e.by !== null) args.by = label(e.by);
    if (e.detail !== null) args.detail = e.detail;
    this.events.push({ ph: "i", s: "t", name, cat: e.kind, pid: e.domain, tid, ts: this.us(e.at), args });
  }

  private slice(pid: number, tid: number, name: string, from: number, to: number, args: Record<string, unknown>): void {
    const ts = this.us(from);
    this.events.push({ ph: "X", name, pid, tid, ts, dur: Math.max(0, this.us(to) - ts), args });
  }

  private nameDomain(domain: number): void {
    if (this.named.has(`${domain}`)) return;
    this.named.add(`${domain}`);
    this.events.push(
      { ph: "M", name: "process_name", pid: domain, tid: STEPS_TRACK, ts: 0, args: { name: `domain ${domain}` } },
      { ph: "M", name: "thread_name", pid: domain, tid: STEPS_TRACK, ts: 0, args: { name: "steps" } },
    );
  }

  private nameTask(domain: number, task: FlightTask): void {
    const key = `${domain}:${task.uid}`;
    if (this.named.has(key)) return;
    this.named.add(key);
    this.events.push({ ph: "M", name: "thread_name", pid: domain, tid: task.uid, ts: 0, args: { name: label(task) } });
  }

  /** The events: a flow is drawn once its woken task runs again, so each `s` has its `f`. */
  finish(): ChromeTraceEvent[] {
    return this.events;
  }
}
