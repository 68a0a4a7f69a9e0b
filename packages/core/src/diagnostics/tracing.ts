/**
 * Which tracer a kernel reports to: the run's own (`run(main, { tracer })`),
 * the diagnostics channels' while someone subscribes, and the age recorder
 * when the run keeps task ages, combined. The kernel asks at the start of
 * each slice (see kernel/trace.ts's `TraceSource`); the combinations are made
 * once, so asking allocates nothing. The domain's flight recorder is made
 * here too, but is no tracer: the kernel tells it directly (kernel/host.ts's
 * `Recorder`).
 */
import { FlightRecorder } from "../kernel/recorder.js";
import type { Tracer, TraceSource } from "../kernel/trace.js";
import { ageRecorder } from "./ages.js";
import { channelTracer, taskChannelsActive } from "./channels.js";

/** @internal */
export class Tracing implements TraceSource {
  private readonly quiet: Tracer | null;
  private readonly listened: Tracer | null;
  readonly recorder: FlightRecorder | null;

  /** `flight`: how many events the domain's flight recorder keeps (0: none). */
  constructor(own: Tracer | null, ages: boolean, domain: number, flight: number) {
    this.recorder = flight === 0 ? null : new FlightRecorder(flight);
    const always = [own, ages ? ageRecorder : null].filter((t): t is Tracer => t !== null);
    this.quiet = combine(always);
    this.listened = combine([...always, ...(ages ? [] : [ageRecorder]), channelTracer(domain)]);
  }

  current(): Tracer | null {
    return taskChannelsActive() ? this.listened : this.quiet;
  }
}

/** One tracer that tells each of `tracers`, in order; null for none. */
function combine(tracers: readonly Tracer[]): Tracer | null {
  if (tracers.length <= 1) return tracers[0] ?? null;
  const points = ["spawn", "start", "suspend", "resume", "cancel", "end"] as const;
  const combined: Tracer = {};
  for (const point of points) {
    const listeners = tracers.filter((t) => t[point] !== undefined);
    if (listeners.length === 0) continue;
    combined[point] = (task, parent?) => {
      for (const t of listeners) (t[point] as (task: unknown, parent: unknown) => void).call(t, task, parent);
    };
  }
  return combined;
}
