/**
 * Spans across worker domains: a task that a `call` or `parallel` runs on a
 * worker thread is a child of its caller's span, in the caller's trace.
 * Worker domains run plain JavaScript, with one copy of core in every
 * thread, so the scenario runs in a Node process of its own on the built
 * packages (fixtures/across-workers.mjs), which prints each domain's spans.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

interface Finished {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parent: string | undefined;
  readonly domain: number;
}

const script = fileURLToPath(new URL("./fixtures/across-workers.mjs", import.meta.url));

it("a task called on a worker domain, and its child, are in the caller's trace, under the caller's span", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [script], { timeout: 15_000 });
  const { dom0, worker } = JSON.parse(stdout) as { dom0: Finished[]; worker: Finished[] };
  const idOf = (name: string) => dom0.find((s) => s.name === name)!.spanId;
  const traceId = dom0.find((s) => s.name === "main")!.traceId;
  const works = worker.filter((s) => s.name === "work");
  expect(works.map((s) => s.domain)).toEqual([1, 1, 1]);
  expect(works.map((s) => s.parent).sort()).toEqual([idOf("caller"), idOf("fanout"), idOf("fanout")].sort());
  for (const s of works) expect(s.traceId).toBe(traceId);
  // Each work's child hangs from it, on the worker, in the same trace.
  const inners = worker.filter((s) => s.name === "inner");
  expect(inners.map((s) => s.parent).sort()).toEqual(works.map((s) => s.spanId).sort());
  for (const s of inners) expect(s.traceId).toBe(traceId);
});
