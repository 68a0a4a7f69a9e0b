/**
 * The scheduler's metrics as OpenTelemetry instruments: how many tasks each
 * domain of this thread has and how many of them are ready to run (read at
 * each collection, from `B.stats()`), how many wakes, and the blocked-step
 * reports (`run`'s `blockingMs`), from core's diagnostics channels.
 */
import * as B from "@bobbin/core";
import type { Meter } from "@opentelemetry/api";
import { type BlockedMessage, listen, type TaskMessage } from "./messages.js";

/**
 * The instruments' names: `bobbin.tasks` (gauge: tasks alive, per domain),
 * `bobbin.tasks.ready` (gauge: the ready queue's length, per domain),
 * `bobbin.wakes` (counter: tasks woken, per domain), `bobbin.tasks.blocked`
 * (counter: blocked-step reports, per domain and task name) and
 * `bobbin.tasks.blocked.duration` (histogram: how long those steps ran, ms).
 *
 * @example
 * ```ts
 * const blocked = metrics.find((m) => m.descriptor.name === INSTRUMENTS.blocked);
 * ```
 */
export const INSTRUMENTS = {
  tasks: "bobbin.tasks",
  ready: "bobbin.tasks.ready",
  wakes: "bobbin.wakes",
  blocked: "bobbin.tasks.blocked",
  blockedDuration: "bobbin.tasks.blocked.duration",
} as const;

/**
 * Records the scheduler's metrics of this thread's runs into `meter`'s
 * instruments (see {@link INSTRUMENTS}), until the returned function is
 * called. The attribute `bobbin.domain` says which domain; a worker
 * domain's thread reports its own domain where it is measured too.
 *
 * @example
 * ```ts
 * const stop = measureTasks(metrics.getMeter("my-service"));
 * await B.run(main, { blockingMs: 50 });
 * stop();
 * ```
 * @throws TypeError when `meter` is not an OpenTelemetry meter.
 */
export function measureTasks(meter: Meter): () => void {
  if (meter === null || typeof meter !== "object" || typeof meter.createCounter !== "function") {
    throw new TypeError("measureTasks(meter) expects an OpenTelemetry Meter (metrics.getMeter(name))");
  }
  const tasks = meter.createObservableGauge(INSTRUMENTS.tasks, { description: "Tasks that have not ended, per domain" });
  const ready = meter.createObservableGauge(INSTRUMENTS.ready, { description: "Tasks ready to run, waiting for their turn, per domain" });
  const observe = (result: Parameters<Parameters<typeof meter.addBatchObservableCallback>[0]>[0]): void => {
    for (const s of B.stats()) {
      const attributes = { "bobbin.domain": s.domain };
      result.observe(tasks, s.tasks, attributes);
      result.observe(ready, s.ready, attributes);
    }
  };
  meter.addBatchObservableCallback(observe, [tasks, ready]);
  const wakes = meter.createCounter(INSTRUMENTS.wakes, { description: "Tasks woken (made ready again after a wait)" });
  const blocked = meter.createCounter(INSTRUMENTS.blocked, { description: "Steps that ran longer than the run's blockingMs" });
  const blockedMs = meter.createHistogram(INSTRUMENTS.blockedDuration, { description: "How long blocked steps ran", unit: "ms" });
  const stop = listen([
    [B.channels.task.wake, (m) => wakes.add(1, { "bobbin.domain": (m as TaskMessage).domain })],
    [
      B.channels.task.blocked,
      (m) => {
        const { task, domain, ms } = m as BlockedMessage;
        blocked.add(1, { "bobbin.domain": domain, "bobbin.task.name": task.name });
        blockedMs.record(ms, { "bobbin.domain": domain });
      },
    ],
  ]);
  return () => {
    stop();
    meter.removeBatchObservableCallback(observe, [tasks, ready]);
  };
}
