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
 */
import * as B from "@bobbin/core";
import { context, type Span, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
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
  readonly filter?: (task: B.Task<unknown>) => boolean;
}

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

  const nearestSpan = (task: B.Task<unknown> | null | undefined): Span | undefined => {
    for (let t = task; t !== null && t !== undefined; t = t.parent) {
      const span = spans.get(t);
      if (span !== undefined) return span;
    }
    return undefined;
  };

  const open = (task: B.Task<unknown>, parent: B.Task<unknown> | undefined, domain: number): void => {
    if (spans.has(task) || !filter(task)) return;
    const parentSpan = nearestSpan(parent ?? task.parent);
    const within = parentSpan === undefined ? context.active() : trace.setSpan(context.active(), parentSpan);
    const attributes = { "bobbin.task": String(task), "bobbin.domain": domain };
    spans.set(task, tracer.startSpan(task.name, { attributes }, within));
  };

  return listen([
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
}
