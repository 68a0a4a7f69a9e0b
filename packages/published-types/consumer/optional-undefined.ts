/**
 * A service's configuration, read from the environment, handed on as it is:
 * each setting may be `undefined`, which every optional option takes as
 * "not given" (the default). Under `exactOptionalPropertyTypes` that holds
 * only when the option's type says `| undefined` too, so this file names
 * every optional option of the options a program passes, each explicitly
 * `undefined`. It is only type-checked (the runtime side is each package's
 * own tests).
 */
import { EventEmitter } from "node:events";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { fetch, serve } from "@bobbin/http";
import { nativeBackend, uringBackend } from "@bobbin/native-poll";
import { instrument } from "@bobbin/opentelemetry";
import { check, explore, replay, Sim, simulated } from "@bobbin/sim";
import * as U from "@bobbin/unix";
import { runOnBackend } from "@bobbin/unix/backend";
import { trace } from "@opentelemetry/api";

const unset = (): undefined => undefined;

function* service(): Generator<B.Instruction, void, unknown> {
  const task = B.spawn({ orphans: unset(), give: unset(), name: unset() }, function* () {});
  yield* B.awaitExn(task);
  B.createContext("tenant", "", { crossesDomains: unset() });
  yield* B.group({ limit: unset(), name: unset(), give: unset() }, function* () {});
  yield* B.forEach([1], function* () {}, { concurrency: unset() });
  B.on(new EventEmitter(), "data", { capacity: unset(), close: unset() });

  const listener = U.tcpv4();
  yield* U.bindAndListen(listener, { host: "127.0.0.1", port: 0 }, { backlog: unset(), reuseAddr: unset() });
  yield* U.lookup("localhost", { family: unset() });
  const child = yield* U.spawnProcess("true", [], {
    cwd: unset(),
    env: unset(),
    stdin: unset(),
    stdout: unset(),
    stderr: unset(),
    grace: unset(),
  });
  yield* child.wait();
  const [end] = yield* U.pipe();
  U.toStream(end, { peer: unset(), orphans: unset() });

  yield* serve(
    {
      host: unset(),
      port: 0,
      onListening: unset(),
      deadline: unset(),
      limit: unset(),
      grace: unset(),
      onError: unset(),
      bodyLimit: unset(),
      node: unset(),
    },
    function* (_req, res) {
      yield* res.send("ok", { status: unset(), headers: unset() });
    },
  );
  yield* fetch("http://127.0.0.1/", { timeout: unset() });
}

export async function start(): Promise<void> {
  const stop = instrument({ tracer: trace.getTracer("svc"), meter: unset(), filter: unset() });
  await B.run(service, {
    domains: unset(),
    workSharing: unset(),
    simulateDomains: unset(),
    seed: unset(),
    taskAges: unset(),
    traces: unset(),
    dumpSignal: unset(),
    blockingMs: unset(),
    flightRecorder: unset(),
    pollEvery: unset(),
    sliceMs: unset(),
    cancelGraceMs: unset(),
    signal: unset(),
  });
  await U.run(service, { backend: unset(), domains: unset() });
  await U.run(service, { backend: () => U.libuv({ flush: unset() }) });
  await U.run(service, {
    backend: () =>
      nativeBackend({
        batchSize: unset(),
        eagerPoll: unset(),
        pool: { slotSize: unset(), maxBytes: unset(), memory: unset() },
      }),
  });
  await U.run(service, { backend: () => nativeBackend({ pool: unset() }) });
  await U.run(service, {
    backend: () =>
      uringBackend({
        entries: unset(),
        buffers: unset(),
        bufferSize: unset(),
        staging: unset(),
        stagingSize: unset(),
        readAhead: unset(),
        taskRun: unset(),
        eagerPoll: unset(),
      }),
  });
  U.main(service, { backend: unset(), onExit: unset() });
  stop();
}

/** A runtime hands on the kernel's seams it was given, each possibly unset. */
export async function runtime(): Promise<void> {
  await L.runKernel(service, { events: unset(), random: unset(), policy: unset(), tracer: unset(), seed: unset() });
  await runOnBackend(service, { backend: unset(), random: unset(), policy: unset(), tracer: unset() });
}

export async function simulate(): Promise<void> {
  const build = (sim: Sim): void => {
    sim.network({ latency: unset(), loss: unset(), reorder: unset() });
    sim.client("client", service);
    sim.disk("client", { sync: unset() });
  };
  const sim = new Sim({
    seed: unset(),
    policy: unset(),
    depth: unset(),
    steps: unset(),
    trace: unset(),
    limit: unset(),
    domains: unset(),
  });
  build(sim);
  await sim.run();
  await check(build, {
    runs: unset(),
    seed: unset(),
    policy: unset(),
    depth: unset(),
    limit: unset(),
    domains: unset(),
    shrink: unset(),
  });
  await explore(build, { bound: unset(), runs: unset(), reduce: unset(), limit: unset(), domains: unset() });
  await explore(build, { bound: { preemptions: unset(), steps: unset() } });
  await replay(build, "seed=1", { trace: unset() });
  await U.run(service, { backend: simulated({ seed: unset() }) });
}
