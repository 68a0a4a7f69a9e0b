// A CommonJS consumer: require() of every package (Node's require of ES
// modules), which must be the very modules import gives — one kernel, one
// class per error — and a program run through them.
const assert = require("node:assert/strict");
const B = require("@bobbin/core");
const L = require("@bobbin/core/lowlevel");
const S = require("@bobbin/sync");
const U = require("@bobbin/unix");
const N = require("@bobbin/native-poll");
const { Sim } = require("@bobbin/sim");
const O = require("@bobbin/opentelemetry");
const { trace } = require("@opentelemetry/api");

async function main() {
  for (const [name, required] of [
    ["@bobbin/core", B],
    ["@bobbin/core/lowlevel", L],
    ["@bobbin/sync", S],
    ["@bobbin/unix", U],
    ["@bobbin/native-poll", N],
    ["@bobbin/opentelemetry", O],
  ]) {
    const imported = await import(name);
    for (const key of Object.keys(imported)) assert.equal(required[key], imported[key], `${name}: require and import differ on ${key}`);
    console.log(`require("${name}") is import("${name}"): ${Object.keys(imported).length} exports`);
  }

  // sync works on the one core: a Mutex protecting a cancelled task's work is released.
  const m = new S.Mutex();
  const outcome = await U.run(function* () {
    const holder = B.spawn(function* () {
      yield* m.protect(() => U.sleep(Infinity));
    });
    yield* U.sleep(0.01);
    yield* B.cancel(holder);
    yield* m.lock();
    m.unlock();
    try {
      yield* B.awaitExn(holder);
    } catch (error) {
      return error instanceof B.Cancelled ? "cancelled (instanceof B.Cancelled)" : `unexpected ${error}`;
    }
    return "not cancelled";
  });
  assert.equal(outcome, "cancelled (instanceof B.Cancelled)");
  console.log(`a program under require: the holder was ${outcome}, and its mutex released`);

  const sim = new Sim({ seed: 7 });
  sim.client("c", function* () {
    yield* U.sleep(60);
    return Date.now();
  });
  const [at] = await sim.run();
  assert.equal(at, Date.UTC(2000, 0, 1) + 60_000);
  console.log("a simulation under require: 60 virtual seconds passed at once");

  // @bobbin/opentelemetry hears the one core's channels: spans of its tasks, here into the API's no-op tracer.
  const started = [];
  const tracer = trace.getTracer("consumer");
  const stop = O.traceTasks({
    startSpan(name, ...rest) {
      started.push(name);
      return tracer.startSpan(name, ...rest);
    },
  });
  await B.run(function* main() {
    yield* B.awaitExn(B.spawn(function* child() {}));
  });
  stop();
  assert.deepEqual(started, ["main", "child"]);
  console.log("@bobbin/opentelemetry under require: a span per task (main, child)");
}

main().then(
  () => console.log("commonjs consumer: ok"),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
