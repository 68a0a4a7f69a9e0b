/**
 * `pnpm demo` until the examples package exists: a small tree of tasks that
 * is spawned, awaited and cancelled, printing what happens.
 */
import * as B from "./index.js";

const sleep = (ms: number) => B.promise((signal) => new Promise<void>((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
}));

function* worker(name: string, steps: number): Generator<B.Instruction, string, unknown> {
  try {
    for (let i = 1; i <= steps; i++) {
      console.log(`  ${name}: step ${i}/${steps} (task ${B.self().uid})`);
      yield* sleep(20);
    }
    return `${name} finished`;
  } finally {
    if (B.self().status === "pending") console.log(`  ${name}: finally ran`);
  }
}

function* supervisor(): Generator<B.Instruction, string, unknown> {
  const a = B.spawn(worker, "grandchild-a", 100);
  const b = B.spawn(worker, "grandchild-b", 100);
  yield* B.awaitAll([a, b]);
  return "unreachable";
}

const started = performance.now();
const result = await B.run(function* () {
  console.log("spawning a quick worker, a slow worker and a supervisor of two grandchildren");
  const quick = B.spawn(worker, "quick", 2);
  const slow = B.spawn(worker, "slow", 100);
  const sup = B.spawn(supervisor);
  console.log(`await quick → ${yield* B.awaitExn(quick)}`);
  console.log("cancel slow and the supervisor's subtree");
  yield* B.cancel(slow);
  yield* B.cancel(sup);
  const [s, t] = [yield* B.awaitTask(slow), yield* B.awaitTask(sup)];
  console.log(`slow → ${s.ok ? "ok" : (s.error as Error).name}, supervisor → ${t.ok ? "ok" : (t.error as Error).name}`);
  const race = yield* B.awaitFirst([B.spawn(worker, "racer-1", 1), B.spawn(worker, "racer-2", 50)]);
  console.log(`awaitFirst → ${race.ok ? race.value : "error"} (the loser was cancelled)`);
  return "all tasks ended; none was forgotten";
});
console.log(`${result} in ${(performance.now() - started).toFixed(0)} ms`);
