import { describe, expect, it } from "vitest";
import { runProgram } from "../support/processes.js";

describe("dist/tracing.js", () => {
  it("serves its clients and prints one trace: main, then server and clients under it, handlers under server", async () => {
    const exit = await runProgram("tracing.js", ["--clients", "3"]);
    expect(exit.code).toBe(0);
    expect(exit.stdout).toContain('echoed: ["hello 1","hello 2","hello 3"]');
    const names = [...exit.stdout.matchAll(/^ {2}name: '(\w+)',$/gm)].map((m) => m[1]);
    expect(names.sort()).toEqual(["client", "client", "client", "handler", "handler", "handler", "main", "server"]);
    const traces = new Set([...exit.stdout.matchAll(/^ {2}traceId: '(\w+)',$/gm)].map((m) => m[1]));
    expect(traces.size).toBe(1);
    // each handler's parent is the server's span
    const spans = exit.stdout.split(/^\{$/m).slice(1);
    const serverId = spans.find((s) => s.includes("name: 'server'"))!.match(/^ {2}id: '(\w+)'/m)![1];
    const handlerParents = spans
      .filter((s) => s.includes("name: 'handler'"))
      .map((s) => s.match(/parentSpanContext: \{[^}]*spanId: '(\w+)'/)![1]);
    expect(handlerParents).toEqual([serverId, serverId, serverId]);
  });
});
