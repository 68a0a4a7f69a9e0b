import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { SpanStatusCode } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { traceTasks } from "../../src/tracing/spans.js";
import { runProgram } from "../support/processes.js";

/** Runs `main` with its tasks traced into memory; returns the spans, by task name. */
async function spansOf(main: () => Generator<B.Instruction, unknown, unknown>): Promise<Map<string, ReadableSpan>> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const stop = traceTasks(provider.getTracer("test"));
  try {
    await B.run(main);
  } finally {
    stop();
  }
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  expect(new Set(spans.map((s) => s.name)).size).toBe(spans.length); // one span per task, names unique below
  return new Map(spans.map((s) => [s.name, s]));
}

describe("traceTasks", () => {
  it("makes a span per task, children under their parent's span, in one trace, with how each ended", async () => {
    const spans = await spansOf(function* main() {
      const failing = B.spawn(function* failing() {
        throw new Error("cannot parse config");
      });
      const sleeper = B.spawn(function* sleeper() {
        yield* new L.Trigger().wait();
      });
      const parent = B.spawn(function* parent() {
        yield* B.awaitExn(B.spawn(function* grandchild() {}));
      });
      yield* B.awaitTask(failing);
      yield* B.cancel(sleeper);
      yield* B.awaitExn(parent);
    });
    expect([...spans.keys()].sort()).toEqual(["failing", "grandchild", "main", "parent", "sleeper"]);
    const main = spans.get("main")!;
    const parentOf = (name: string): string | undefined => spans.get(name)!.parentSpanContext?.spanId;
    expect(parentOf("main")).toBeUndefined();
    for (const child of ["failing", "sleeper", "parent"]) expect(parentOf(child)).toBe(main.spanContext().spanId);
    expect(parentOf("grandchild")).toBe(spans.get("parent")!.spanContext().spanId);
    for (const span of spans.values()) expect(span.spanContext().traceId).toBe(main.spanContext().traceId);

    expect(spans.get("failing")!.status).toEqual({ code: SpanStatusCode.ERROR, message: "cannot parse config" });
    expect(spans.get("failing")!.events.map((e) => e.name)).toEqual(["start", "exception"]);
    expect(spans.get("sleeper")!.status).toEqual({ code: SpanStatusCode.ERROR, message: "cancelled" });
    expect(spans.get("sleeper")!.events.map((e) => e.name)).toEqual(["start", "cancel asked"]);
    expect(main.status.code).toBe(SpanStatusCode.UNSET);
    expect(main.attributes).toEqual({ "bobbin.task": "main#1", "bobbin.domain": 0 });
  });

  it("stops: a run after the returned function was called makes no span", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    traceTasks(provider.getTracer("test"))();
    await B.run(function* main() {
      yield* B.awaitExn(B.spawn(function* child() {}));
    });
    await provider.forceFlush();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

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
