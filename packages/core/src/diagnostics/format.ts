/**
 * `formatDump`: a dump as an indented tree, one task per line, for people.
 */
import type { DomainFlight, FlightEvent } from "../kernel/flight.js";
import type { Dump, TaskDump } from "./dump-data.js";

/**
 * Renders a {@link Dump} as an indented tree, one task per line:
 * `name#uid`, its domain when not dom0, its state, its age, what it waits
 * on, and where (the `yield*` it waits at, in a run that keeps traces);
 * then each domain's flight recorder, when the run keeps one (see
 * {@link formatFlight}).
 *
 * @example
 * ```ts
 * console.error(B.formatDump(await B.dump()));
 * // main#1 — waiting, 12.3 s: await handler#4 (at server.ts:57)
 * // ├─ acceptLoop#2 — waiting, 12.3 s: accept tcp 127.0.0.1:3000 (at server.ts:31)
 * // └─ handler#4 — waiting, 2.1 s: lock Mutex#1 held by handler#5 (at server.ts:44)
 * ```
 * @throws TypeError when `dump` is not a dump.
 */
export function formatDump(dump: Dump): string {
  if (dump === null || typeof dump !== "object" || !Array.isArray(dump.tasks)) {
    throw new TypeError("formatDump(dump) expects what B.dump() resolves to");
  }
  const lines: string[] = [`Bobbin tasks at ${new Date(dump.takenAt).toISOString()}:`];
  if (dump.tasks.length === 0) lines.push("(no run in progress)");
  for (const task of dump.tasks) render(task, "", "", lines);
  if (dump.unanswered.length !== 0) {
    lines.push(`(domains ${dump.unanswered.join(", ")} did not answer within a second: their tasks are missing)`);
  }
  for (const flight of dump.flight ?? []) lines.push(...formatFlight(flight));
  return `${lines.join("\n")}\n`;
}

/**
 * The lines of a domain's flight recorder, oldest event first, each with its
 * time since the first one: `+1.250 ms park handler#4: sleep 10 ms`.
 *
 * @example
 * ```ts
 * for (const f of (await B.dump()).flight) console.error(B.formatFlight(f).join("\n"));
 * ```
 * @throws TypeError when `flight` is not a domain's flight recorder.
 */
export function formatFlight(flight: DomainFlight): string[] {
  if (flight === null || typeof flight !== "object" || !Array.isArray(flight.events)) {
    throw new TypeError("formatFlight(flight) expects one of the `flight` entries of what B.dump() resolves to");
  }
  const overwritten = flight.dropped === 0 ? "" : `, ${flight.dropped} older overwritten`;
  const lines = [`flight recorder of domain ${flight.domain} (last ${flight.events.length} events${overwritten}):`];
  const first = flight.events[0]?.at ?? 0;
  for (const e of flight.events) lines.push(`  +${(e.at - first).toFixed(3)} ms ${describeEvent(e)}`);
  return lines;
}

function describeEvent(e: FlightEvent): string {
  const task = e.task === null ? "" : ` ${e.task.name}#${e.task.uid}`;
  const where = e.domain === 0 ? "" : ` @ domain ${e.domain}`;
  switch (e.kind) {
    case "spawn":
      return `spawn${task}${where} by ${e.by!.name}#${e.by!.uid}`;
    case "park":
      return `park${task}${where}: ${e.detail}`;
    case "wake":
      return `wake${task}${where} ${e.by === null ? "from outside any task" : `by ${e.by.name}#${e.by.uid}`}`;
    case "end":
      return `end${task}${where} ${e.detail}`;
    case "io":
      return `io${where}: ${e.detail}`;
    default:
      return `${e.kind}${task}${where}`;
  }
}

/** The line of one task, without its tree prefix. */
export function describeTask(task: TaskDump): string {
  const where = task.domain === 0 ? "" : ` @ domain ${task.domain}`;
  const cancelling = task.cancelling ? " (cancelling)" : "";
  const age = task.ageMs === null ? "" : `, ${formatAge(task.ageMs)}`;
  const waits = task.waitsOn === null ? "" : `: ${task.waitsOn}${task.suspendedAt === null ? "" : ` (at ${task.suspendedAt})`}`;
  return `${task.name}#${task.uid}${where} — ${task.state}${cancelling}${age}${waits}`;
}

function render(task: TaskDump, prefix: string, childPrefix: string, lines: string[]): void {
  lines.push(`${prefix}${describeTask(task)}`);
  const last = task.children.length - 1;
  task.children.forEach((child, i) => {
    render(child, `${childPrefix}${i === last ? "└─ " : "├─ "}`, `${childPrefix}${i === last ? "   " : "│  "}`, lines);
  });
}

/** Milliseconds in a few characters: "850 ms", "12.3 s", "4 min 10 s". */
export function formatAge(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
