/**
 * Bobbin's tasks as OpenTelemetry spans, from core's diagnostics channels:
 * a span opens when a task is spawned (a task without a parent when it
 * starts) as a child of the span of its nearest traced ancestor, records
 * when the task starts running, when its cancellation was asked for and
 * each blocked-step report, and ends with the task — an error status and
 * the exception for a failed task, an error status for a cancelled one. A
 * call to another domain is an attribute of the span of the task that
 * stands for it; a task of a domain simulated on this thread is a child of
 * its caller's span, as it is in the tree.
 *
 * Each traced task is given its span's context as a context value
 * (`spanContext`), which crosses to worker domains with a `call` or
 * `parallel`: there, a task spawned by a task that sees a span context no
 * span of its thread has (the caller's, brought by the call) is a child of
 * that remote span, so a worker's spans join the caller's trace.
 */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { context, type Span, type SpanContext, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { type BlockedMessage, type CallMessage, listen, type TaskMessage } from "./messages.js";

/**
 * Which tasks get a span: all of them (the default), or those `filter`
 * accepts (a task filtered out is skipped: its traced children hang from
 * its nearest traced ancestor).
 *
 * @example
 * ```ts
 * const named: TraceOptions = { filter: (task) => task.name !== "anonymous" };
 * ```
 */
export interface TraceOptions {
  readonly filter?: ((task: B.Task<unknown>) => boolean) | undefined;
}

/** A span's context as it crosses domains (a plain object: it is cloned). */
interface SpanValue {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
}

/** The context that carries the span of a task's nearest traced ancestor, made at the first `traceTasks` of the thread (a name is made once per thread). */
let spanContext: B.Context<SpanValue | null> | null = null;

/**
 * Turns the tasks of this thread's runs into spans of `tracer`, until the
 * returned function is called. Subscribe before `run`: a run starts
 * publishing at its next slice after the first subscriber. Channels are per
 * thread: in a worker domain's thread, call it there (from the module of
 * its parallel tasks) with that thread's tracer.
 *
 * @example
 * ```ts
 * const stop = traceTasks(trace.getTracer("my-service"), { filter: (t) => t.name === "handler" });
 * await B.run(main);
 * stop();
 * ```
 * @throws TypeError when `tracer` is not an OpenTelemetry tracer or `filter` not a function.
 */
export function traceTasks(tracer: Tracer, options: TraceOptions = {}): () => void {
  if (tracer === null || typeof tracer !== "object" || typeof tracer.startSpan !== "function") {
    throw new TypeError("traceTasks(tracer) expects an OpenTelemetry Tracer (trace.getTracer(name))");
  }
  const filter = options.filter ?? (() => true);
  if (typeof filter !== "function") throw new TypeError("traceTasks(tracer, { filter }) expects a function (task) => boolean");
  const spans = new Map<B.Task<unknown>, Span>();
  const carried = (spanContext ??= B.createContext<SpanValue | null>("@bobbin/opentelemetry.span", null));
  /** The span ids of the spans open here: a span context a task sees that is not among them came from another domain. */
  const local = new Set<string>();
  /** Tasks whose spawner saw a span context from another domain: their span's parent. */
  const remote = new WeakMap<B.Task<unknown>, SpanContext>();

  const nearestSpan = (task: B.Task<unknown> | null | undefined): Span | undefined => {
    for (let t = task; t !== null && t !== undefined; t = t.parent) {
      const span = spans.get(t);
      if (span !== undefined) return span;
    }
    return undefined;
  };

  const open = (task: B.Task<unknown>, parent: B.Task<unknown> | undefined, domain: number): void => {
    if (spans.has(task) || !filter(task)) return;
    const far = remote.get(task);
    const parentSpan = far === undefined ? nearestSpan(parent ?? task.parent) : undefined;
    const within =
      far !== undefined
        ? trace.setSpanContext(context.active(), far)
        : parentSpan === undefined
          ? context.active()
          : trace.setSpan(context.active(), parentSpan);
    const attributes = { "bobbin.task": String(task), "bobbin.domain": domain };
    const span = tracer.startSpan(task.name, { attributes }, within);
    spans.set(task, span);
    const { traceId, spanId, traceFlags } = span.spanContext();
    local.add(spanId);
    L.giveContext(task, carried, { traceId, spanId, traceFlags });
  };

  // A spawn hook runs in the spawner, whose values the child takes: what it sees tells where the child's span hangs.
  const stopHearingSpawns = L.onSpawn((child) => {
    const seen = carried.get();
    if (seen !== null && !local.has(seen.spanId)) remote.set(child, { ...seen, isRemote: true });
  });

  const stopListening = listen([
    [B.channels.task.spawn, (m) => open((m as TaskMessage).task, (m as TaskMessage).parent, (m as TaskMessage).domain)],
    [
      B.channels.task.start,
      (m) => {
        const { task, domain } = m as TaskMessage;
        open(task, undefined, domain);
        spans.get(task)?.addEvent("start");
      },
    ],
    [B.channels.task.cancel, (m) => spans.get((m as TaskMessage).task)?.addEvent("cancel asked")],
    [
      B.channels.task.blocked,
      (m) => {
        const { task, ms, resumedFrom } = m as BlockedMessage;
        spans.get(task)?.addEvent("blocked", { "bobbin.blocked.ms": ms, "bobbin.blocked.from": resumedFrom });
      },
    ],
    [
      B.channels.task.end,
      (m) => {
        const { task, status, error } = m as TaskMessage;
        const span = spans.get(task);
        if (span === undefined) return;
        spans.delete(task);
        local.delete(span.spanContext().spanId);
        if (status === "failed") {
          span.recordException(error instanceof Error ? error : String(error));
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        } else if (status === "cancelled") {
          span.setStatus({ code: SpanStatusCode.ERROR, message: "cancelled" });
        }
        span.end();
      },
    ],
    [
      B.channels.call.start,
      (m) => {
        const { task, name, domain } = m as CallMessage;
        spans.get(task)?.setAttributes({ "bobbin.call": name ?? "", "bobbin.call.domain": domain });
      },
    ],
  ]);
  return () => {
    stopListening();
    stopHearingSpawns();
  };
}
