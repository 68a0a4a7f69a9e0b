/**
 * The kernel is core's bottom layer: no chain of imports (type imports
 * included) leads from a kernel file back into it through the rest of core.
 * Lint keeps the kernel's own imports to core's leaf modules; this test sees
 * the whole graph, so that a leaf that starts importing the kernel is caught too.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = fileURLToPath(new URL("../../src/", import.meta.url));

/** Every `.ts` module under `dir` (declaration files left out). */
function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modules(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The relative imports and re-exports of a module (`from "./x.js"`, `import "./x.js"`), as source paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^;]*?["'](\.{1,2}\/[^"']+)["']/gm)) {
    found.push(resolve(dirname(file), m[1]!).replace(/\.js$/, ".ts"));
  }
  return found;
}

/** The import circles of `graph`: its strongly connected components of more than one module, or one importing itself. */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)!.includes(v)) found.push(component);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("core's import graph", () => {
  const graph = new Map(modules(src).map((file) => [file, importsOf(file)]));

  it("is read whole: the kernel's modules and their imports are found", () => {
    const loop = join(src, "kernel", "loop.ts");
    expect(graph.get(loop)).toContain(join(src, "kernel", "fiber.ts"));
    expect(graph.get(join(src, "index.ts"))!.length).toBeGreaterThan(10);
  });

  it("has no circle through kernel/", () => {
    const throughKernel = circles(graph)
      .map((component) => component.map((file) => relative(src, file)).sort())
      .filter((component) => component.some((file) => file.startsWith("kernel/")));
    expect(throughKernel).toEqual([]);
  });
});
