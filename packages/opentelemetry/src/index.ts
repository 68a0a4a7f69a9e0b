/**
 * OpenTelemetry for Bobbin: `traceTasks` (a span per task, parented along
 * the task tree), `measureTasks` (the scheduler's metrics as instruments),
 * and `instrument`, both at once.
 */
import type { Meter, Tracer } from "@opentelemetry/api";
import { measureTasks } from "./metrics.js";
import { type TraceOptions, traceTasks } from "./spans.js";

export { INSTRUMENTS, measureTasks } from "./metrics.js";
export { type TraceOptions, traceTasks } from "./spans.js";

/**
 * What {@link instrument} records into: spans into `tracer` (with `filter`
 * choosing the tasks), metrics into `meter`; either may be left out.
 *
 * @example
 * ```ts
 * const options: InstrumentOptions = { tracer: trace.getTracer("svc"), meter: metrics.getMeter("svc") };
 * ```
 */
export interface InstrumentOptions extends TraceOptions {
  readonly tracer?: Tracer | undefined;
  readonly meter?: Meter | undefined;
}

/**
 * Traces the tasks of this thread's runs (`traceTasks`) and measures their
 * scheduler (`measureTasks`), until the returned function is called.
 *
 * @example
 * ```ts
 * const stop = instrument({ tracer: trace.getTracer("svc"), meter: metrics.getMeter("svc") });
 * await B.run(main);
 * stop();
 * ```
 * @throws TypeError when given neither a tracer nor a meter, or one that is not OpenTelemetry's.
 */
export function instrument(options: InstrumentOptions): () => void {
  const { tracer, meter, ...trace } = options ?? {};
  if (tracer === undefined && meter === undefined) throw new TypeError("instrument(options) expects a tracer, a meter, or both");
  const stopTracing = tracer === undefined ? null : traceTasks(tracer, trace);
  let stopMeasuring: (() => void) | null = null;
  try {
    stopMeasuring = meter === undefined ? null : measureTasks(meter);
  } catch (error) {
    stopTracing?.();
    throw error;
  }
  return () => {
    stopTracing?.();
    stopMeasuring?.();
  };
}
