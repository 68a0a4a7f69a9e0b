import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it } from "vitest";
import { INSTRUMENTS, instrument, measureTasks } from "../src/index.js";

/** A meter whose metrics are exported to memory when `collect` is called. */
function memoryMeter() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  /** Exports now; returns each instrument's data points, by name. */
  const collect = async (): Promise<Map<string, DataPoint<unknown>[]>> => {
    exporter.reset();
    await reader.forceFlush();
    const metrics = exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
    return new Map(metrics.map((m) => [m.descriptor.name, m.dataPoints as DataPoint<unknown>[]]));
  };
  return { meter: provider.getMeter("test"), collect, provider };
}

const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** Keeps the thread busy for `ms`, without yielding. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** The value of a data point with these attributes. */
const valueAt = (points: DataPoint<unknown>[] | undefined, attributes: Record<string, unknown>): unknown =>
  points?.find((p) => JSON.stringify(p.attributes) === JSON.stringify(attributes))?.value;

describe("measureTasks", () => {
  it("observes tasks alive and ready per domain at each collection, and counts wakes", async () => {
    const { meter, collect, provider } = memoryMeter();
    stops.push(measureTasks(meter));
    let during = new Map<string, DataPoint<unknown>[]>();
    await B.run(function* main() {
      let done = false;
      const children = [0, 1, 2].map(() =>
        B.spawn(function* child() {
          while (!done) yield* B.yieldNow();
        }),
      );
      during = yield* B.promise(() => collect()); // collected between two slices: the children wait for their turn
      done = true;
      const trigger = new L.Trigger();
      const last = B.spawn(function* waiter() {
        yield* trigger.wait();
      });
      yield* B.yieldNow();
      trigger.signal();
      yield* B.awaitAll([...children, last]);
    });
    const after = await collect();
    const dom0 = { "bobbin.domain": 0 };
    expect(valueAt(during.get(INSTRUMENTS.tasks), dom0)).toBe(4);
    expect(valueAt(during.get(INSTRUMENTS.ready), dom0)).toBe(3);
    // main by the promise and by the end of the last task it awaited, the waiter by its trigger (yields are no wakes)
    expect(valueAt(after.get(INSTRUMENTS.wakes), dom0)).toBe(3);
    await provider.shutdown();
  });

  it("counts blocked-step reports per task name, and records how long they ran", async () => {
    const { meter, collect, provider } = memoryMeter();
    stops.push(measureTasks(meter));
    await B.run(
      function* main() {
        yield* B.awaitExn(
          B.spawn(function* cruncher() {
            spin(25);
            yield* B.yieldNow();
            spin(25);
          }),
        );
      },
      { blockingMs: 10 },
    );
    const metrics = await collect();
    const blocked = metrics.get(INSTRUMENTS.blocked)!;
    expect(valueAt(blocked, { "bobbin.domain": 0, "bobbin.task.name": "cruncher" })).toBe(2);
    // main's short steps are reported too if the machine descheduled the process in one: the histogram has them all
    const histogram = valueAt(metrics.get(INSTRUMENTS.blockedDuration), { "bobbin.domain": 0 }) as Histogram;
    expect(histogram.count).toBe(blocked.reduce((n, p) => n + (p.value as number), 0));
    expect(histogram.max).toBeGreaterThanOrEqual(25);
    expect(histogram.min).toBeGreaterThan(10);
    await provider.shutdown();
  });

  it("stops: nothing is counted after the returned function was called", async () => {
    const { meter, collect, provider } = memoryMeter();
    measureTasks(meter)();
    await B.run(function* main() {
      yield* B.awaitExn(B.spawn(function* child() {}));
    });
    const metrics = await collect();
    expect(metrics.get(INSTRUMENTS.wakes) ?? []).toEqual([]);
    expect(() => measureTasks({} as never)).toThrow(/measureTasks\(meter\) expects an OpenTelemetry Meter/);
    await provider.shutdown();
  });
});

describe("instrument", () => {
  it("needs a tracer or a meter", () => {
    expect(() => instrument({})).toThrow(/expects a tracer, a meter, or both/);
  });

  it("measures with a meter alone", async () => {
    const { meter, collect, provider } = memoryMeter();
    stops.push(instrument({ meter }));
    await B.run(function* main() {
      yield* B.awaitExn(B.spawn(function* child() {}));
    });
    expect(valueAt((await collect()).get(INSTRUMENTS.wakes), { "bobbin.domain": 0 })).toBe(1);
    await provider.shutdown();
  });
});
