/**
 * Checks that a file is a well-formed Chrome trace (the Trace Event
 * format's JSON object form), as far as Perfetto and chrome://tracing rely
 * on it: every event has its phase, name, process, track and time; a slice
 * (`X`) has a duration, or begins (`B`) and ends (`E`) on its track, nested;
 * every flow start (`s`) has one end (`f`) with its id, no earlier.
 * Core's flight recorder and the simulator write such traces.
 */

const PHASES = new Set(["X", "B", "E", "i", "I", "s", "t", "f", "M", "C"]);

interface Event {
  readonly ph: string;
  readonly name: string;
  readonly pid: number;
  readonly tid: number;
  readonly ts: number;
  readonly dur?: number;
  readonly id?: number | string;
}

/** The problems of `json` as a Chrome trace, in words; none for a well-formed one. */
export function chromeTraceProblems(json: string): string[] {
  const problems: string[] = [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    return [`not JSON: ${String(error)}`];
  }
  const events = (parsed as { traceEvents?: unknown } | null)?.traceEvents;
  if (!Array.isArray(events)) return ["no traceEvents array"];
  const open = new Map<string, Event[]>();
  const flows = new Map<string, { start?: Event; end?: Event }>();
  for (const [i, e] of (events as Event[]).entries()) {
    const at = `event ${i} (${JSON.stringify(e).slice(0, 80)})`;
    if (e === null || typeof e !== "object") {
      problems.push(`${at}: not an object`);
      continue;
    }
    if (!PHASES.has(e.ph)) problems.push(`${at}: ph ${String(e.ph)} is not a phase`);
    if (typeof e.name !== "string" || e.name === "") problems.push(`${at}: no name`);
    if (!Number.isInteger(e.pid) || !Number.isInteger(e.tid)) problems.push(`${at}: pid and tid must be integers`);
    if (typeof e.ts !== "number" || !Number.isFinite(e.ts) || e.ts < 0) problems.push(`${at}: ts must be a time in µs`);
    const track = `${e.pid}:${e.tid}`;
    switch (e.ph) {
      case "X":
        if (typeof e.dur !== "number" || !Number.isFinite(e.dur) || e.dur < 0) problems.push(`${at}: a complete slice needs a dur ≥ 0`);
        break;
      case "B":
        open.set(track, [...(open.get(track) ?? []), e]);
        break;
      case "E": {
        const begun = open.get(track)?.pop();
        if (begun === undefined) problems.push(`${at}: ends a slice that never began on track ${track}`);
        else if (e.ts < begun.ts) problems.push(`${at}: ends before it began`);
        break;
      }
      case "s":
      case "f": {
        const key = String(e.id);
        if (e.id === undefined) problems.push(`${at}: a flow event needs an id`);
        const flow = flows.get(key) ?? {};
        const end = e.ph === "s" ? "start" : "end";
        if (flow[end] !== undefined) problems.push(`${at}: flow ${key} has two ${end}s`);
        flow[end] = e;
        flows.set(key, flow);
        break;
      }
    }
  }
  for (const [track, stack] of open) if (stack.length !== 0) problems.push(`track ${track}: ${stack.length} slice(s) never end`);
  for (const [id, { start, end }] of flows) {
    if (start === undefined || end === undefined) problems.push(`flow ${id} has no ${start === undefined ? "start (s)" : "end (f)"}`);
    else if (end.ts < start.ts) problems.push(`flow ${id} ends before it starts`);
  }
  return problems;
}
