/**
 * Chapter 5, "Retrospective": `node dist/ch05-retrospective.js`.
 *
 * Runs each of the chapter's programs in turn and prints what it printed,
 * returned or raised, the way the book shows it.
 */
import * as R from "./ch05/retrospective.js";

function show(value: unknown): string {
  if (value instanceof Error) return `Exception: ${value.name}`;
  if (Array.isArray(value)) return `[${value.map(show).join(", ")}]`;
  if (value !== null && typeof value === "object" && "ok" in value) {
    const r = value as { ok: boolean; value?: unknown; error?: unknown };
    return r.ok ? `Ok ${JSON.stringify(r.value)}` : `Error ${(r.error as Error).name}`;
  }
  return JSON.stringify(value);
}

const programs: [string, () => Promise<unknown>][] = [
  ["a task as a resource: forgetting a child", R.forgottenChild],
  ["background tasks: orphans cleaned up as they end (10 jobs)", () => R.backgroundJobs(10)],
  ["structured concurrency: awaiting a sibling", R.awaitSibling],
  ["cancellation: a child cancelled before it ran", R.cancelChild],
  ["cancellation: cancelling a sibling", R.cancelSibling],
  ["cancellation overrides any state: 1 + 1, awaited, cancelled, awaited", R.cancelAfterCompletion],
  ["cancelling a task cancels its subtree (an infinite parallel task)", R.cancelSubtree],
  ["cancellation is asynchronous: p0 runs while p1 is being cancelled", R.cancellationLetsOthersRun],
  ["a parallel task", R.parallelTask],
  ["a parallel task's callee runs on another domain: [u, v]", R.callFromCallee],
  ["two calls in a row may share a domain: tries until they did", R.sameDomainTwice],
  ["parallel over three domains", R.parallelOverDomains],
  ["dom0 through spawn, plus parallel over three domains", R.everyDomain],
];

for (const [title, program] of programs) {
  console.log(`# ${title}`);
  try {
    console.log(`→ ${show(await program())}`);
  } catch (error) {
    console.log(`→ ${show(error)}`);
  }
}
