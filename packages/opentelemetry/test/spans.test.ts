import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { SpanStatusCode } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { type TraceOptions, traceTasks } from "../src/index.js";

/** Runs `main` with its tasks traced into memory; returns the spans, by task name (unique in these tests). */
async function spansOf(
  main: () => Generator<B.Instruction, unknown, unknown>,
  options: TraceOptions = {},
  run: B.RunOptions = {},
): Promise<Map<string, ReadableSpan>> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const stop = traceTasks(provider.getTracer("test"), options);
  try {
    await B.run(main, run);
  } finally {
    stop();
  }
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  expect(new Set(spans.map((s) => s.name)).size).toBe(spans.length);
  return new Map(spans.map((s) => [s.name, s]));
}

const parentOf = (spans: Map<string, ReadableSpan>, name: string): string | undefined => spans.get(name)!.parentSpanContext?.spanId;
const idOf = (spans: Map<string, ReadableSpan>, name: string): string => spans.get(name)!.spanContext().spanId;

/** A task that does some work on a domain simulated on this thread. */
const work = B.defineTask(import.meta.url, "work", function* (n: number) {
  const inner = B.spawn(function* inner() {
    return n * 2;
  });
  return yield* B.awaitExn(inner);
});

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
    expect(parentOf(spans, "main")).toBeUndefined();
    for (const child of ["failing", "sleeper", "parent"]) expect(parentOf(spans, child)).toBe(idOf(spans, "main"));
    expect(parentOf(spans, "grandchild")).toBe(idOf(spans, "parent"));
    for (const span of spans.values()) expect(span.spanContext().traceId).toBe(spans.get("main")!.spanContext().traceId);
    expect(spans.get("failing")!.status).toEqual({ code: SpanStatusCode.ERROR, message: "cannot parse config" });
    expect(spans.get("failing")!.events.map((e) => e.name)).toEqual(["start", "exception"]);
    expect(spans.get("sleeper")!.status).toEqual({ code: SpanStatusCode.ERROR, message: "cancelled" });
    expect(spans.get("sleeper")!.events.map((e) => e.name)).toEqual(["start", "cancel asked"]);
    expect(spans.get("main")!.status.code).toBe(SpanStatusCode.UNSET);
    expect(spans.get("main")!.attributes).toEqual({ "bobbin.task": "main#1", "bobbin.domain": 0 });
  });

  it("traces only the tasks the filter accepts, each under its nearest traced ancestor", async () => {
    const spans = await spansOf(
      function* main() {
        yield* B.awaitExn(
          B.spawn(function* plumbing() {
            yield* B.awaitExn(B.spawn({ name: "request" }, function* () {}));
          }),
        );
      },
      { filter: (task) => task.name !== "plumbing" },
    );
    expect([...spans.keys()].sort()).toEqual(["main", "request"]);
    expect(parentOf(spans, "request")).toBe(idOf(spans, "main"));
  });

  it("records each blocked-step report on the task's span", async () => {
    const spans = await spansOf(
      function* main() {
        const until = performance.now() + 30;
        while (performance.now() < until);
        yield* B.yieldNow();
      },
      {},
      { blockingMs: 10 },
    );
    const blocked = spans.get("main")!.events.find((e) => e.name === "blocked")!;
    expect(blocked.attributes!["bobbin.blocked.ms"]).toBeGreaterThanOrEqual(30);
    expect(blocked.attributes!["bobbin.blocked.from"]).toBe("its first step");
  });

  it("parents a task that runs on another (simulated) domain under its caller's span", async () => {
    const spans = await spansOf(
      function* main() {
        yield* B.awaitExn(B.call(work, 21));
      },
      {},
      { domains: 2, simulateDomains: true, seed: 1 },
    );
    const call = [...spans.values()].find((s) => s.attributes["bobbin.call"] === "work")!;
    expect(call).toBeDefined();
    expect(parentOf(spans, "inner")).toBeDefined();
    // inner runs on a worker domain, under the task that runs work there, under the caller's span
    expect(spans.get("inner")!.attributes["bobbin.domain"]).not.toBe(0);
    let span = spans.get("inner")!;
    const chain: string[] = [];
    while (span.parentSpanContext !== undefined) {
      span = [...spans.values()].find((s) => s.spanContext().spanId === span.parentSpanContext!.spanId)!;
      chain.push(span.name);
    }
    expect(chain.at(-1)).toBe("main");
    expect(chain).toContain(call.name);
  });

  it("stops: a run after the returned function was called makes no span; bad arguments are refused", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    traceTasks(provider.getTracer("test"))();
    await B.run(function* main() {
      yield* B.awaitExn(B.spawn(function* child() {}));
    });
    await provider.forceFlush();
    expect(exporter.getFinishedSpans()).toEqual([]);
    expect(() => traceTasks({} as never)).toThrow(/traceTasks\(tracer\) expects an OpenTelemetry Tracer/);
    expect(() => traceTasks(provider.getTracer("t"), { filter: 1 as never })).toThrow(/filter/);
  });
});
