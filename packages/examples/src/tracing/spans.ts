/**
 * Bobbin's tasks as OpenTelemetry spans, from core's diagnostics channels
 * (`B.channels`): a span opens when a task is spawned (the root's when it
 * starts) as a child of its parent task's span, records when the task starts
 * running and when its cancellation was asked for, and ends with the task —
 * an error status and the exception for a failed task, an error status for a
 * cancelled one. A call to another domain is an attribute of the span of the
 * task that stands for it. The channels are per thread: this traces the
 * domain of the thread that calls it (dom0, from the entry module).
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import * as B from "@bobbin/core";
import { context, type Span, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";

interface TaskMessage {
  readonly task: B.Task<unknown>;
  readonly parent?: B.Task<unknown>;
  readonly domain: number;
  readonly status?: B.TaskStatus;
  readonly error?: unknown;
}

interface CallMessage {
  readonly task: B.Task<unknown>;
  readonly name?: string;
  readonly domain: number;
  readonly ok?: boolean;
}

/**
 * Turns every task of this thread's runs into a span of `tracer`, until the
 * returned function is called. Subscribe before `run`: a run starts
 * publishing at its next slice after the first subscriber.
 */
export function traceTasks(tracer: Tracer): () => void {
  const spans = new Map<B.Task<unknown>, Span>();

  const open = (task: B.Task<unknown>, parent: B.Task<unknown> | undefined, domain: number): Span => {
    const parentSpan = parent === undefined ? undefined : spans.get(parent);
    const within = parentSpan === undefined ? context.active() : trace.setSpan(context.active(), parentSpan);
    const span = tracer.startSpan(task.name, { attributes: { "bobbin.task": String(task), "bobbin.domain": domain } }, within);
    spans.set(task, span);
    return span;
  };

  const handlers: [string, (message: unknown) => void][] = [
    [B.channels.task.spawn, (m) => void open((m as TaskMessage).task, (m as TaskMessage).parent, (m as TaskMessage).domain)],
    [
      B.channels.task.start,
      (m) => {
        const { task, domain } = m as TaskMessage;
        (spans.get(task) ?? open(task, undefined, domain)).addEvent("start");
      },
    ],
    [B.channels.task.cancel, (m) => spans.get((m as TaskMessage).task)?.addEvent("cancel asked")],
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
  ];
  for (const [name, handler] of handlers) subscribe(name, handler);
  return () => {
    for (const [name, handler] of handlers) unsubscribe(name, handler);
  };
}
