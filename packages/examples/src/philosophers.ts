/**
 * The dining philosophers (Miou's `test/philosophers`):
 *
 *     node dist/philosophers.js [seconds=10] [--unit 1] [--seed n]
 *
 * Watches five philosophers think and eat for `seconds`, then cancels them.
 * `--unit 0.1` makes their "seconds" last 0.1 s.
 */
import { parseArgs } from "node:util";
import { run } from "@bobbin/unix";
import { dinner } from "./philosophers/table.js";

const { values, positionals } = parseArgs({
  options: { unit: { type: "string", default: "1" }, seed: { type: "string" } },
  allowPositionals: true,
});
const seconds = Number(positionals[0] ?? 10);
const unit = Number(values.unit);
const seed = values.seed === undefined ? undefined : Number(values.seed);
if (!(seconds >= 0) || !(unit > 0)) throw new RangeError("usage: philosophers.js [seconds ≥ 0] [--unit > 0] [--seed n]");

const { meals, seed: used } = await run(function* () {
  return yield* dinner(seconds, { unit, seed });
});
const count = [1, 2, 3, 4, 5].map((uid) => meals.filter((m) => m.uid === uid).length);
console.log(`time is up: meals ${count.map((n, i) => `${String(i + 1).padStart(2, "0")}×${n}`).join(" ")} (seed ${used})`);
