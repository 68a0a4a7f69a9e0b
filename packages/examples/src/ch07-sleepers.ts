/**
 * Chapter 7, the `Chat` sleepers: `node dist/ch07-sleepers.js`.
 *
 * 1. two tasks sleep 1 s and 2 s at the same time: less than 3 s in all;
 * 2. the same with parallel tasks, each domain with its own sleepers;
 * 3. a parallel task sleeping 10 s is cancelled: `cancel` returns at once.
 */
import { cancelLongSleep, twoParallelSleeps, twoSleeps } from "./ch07/programs.js";

const fmt = (s: number): string => `${s.toFixed(3)} s`;

const t = await twoSleeps(1, 2);
console.log(`spawn (sleep 1), spawn (sleep 2), await both: ${fmt(t)} ${t < 3 ? "< 3 s: they slept concurrently" : "≥ 3 s?!"}`);
const u = await twoParallelSleeps(1, 2);
console.log(`call (sleep 1), call (sleep 2), await both: ${fmt(u)} ${u < 3 ? "< 3 s" : "≥ 3 s?!"}`);
const c = await cancelLongSleep(10);
console.log(
  `call (sleep 10), cancel: cancelled after ${fmt(c.seconds)} (cancel took ${fmt(c.cancelSeconds)}; ` +
    `the sleeping domain was interrupted ${c.interrupts} time(s)) → ${c.result.ok ? "Ok?!" : (c.result.error as Error).name}`,
);
