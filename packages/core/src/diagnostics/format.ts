/**
 * `formatDump`: a dump as an indented tree, one task per line, for people.
 */
import type { Dump, TaskDump } from "./dump-data.js";

/**
 * Renders a {@link Dump} as an indented tree, one task per line:
 * `name#uid`, its domain when not dom0, its state, its age, what it waits
 * on, and where (the `yield*` it waits at, in a run that keeps traces).
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
  return `${lines.join("\n")}\n`;
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
