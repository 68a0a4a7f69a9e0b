// Scenario — what traces across tasks cost (`run({ traces })`: a stack captured
// at every spawn and every park): spawn-await.js's spawn + await of 100k
// children, and a ping-pong of two tasks through triggers (every step parks),
// each with traces off and on. The production default of `traces` (off) is
// decided by these rows.

import { runContenders } from "./harness.js";
import { asyncParent, expected, INTERLEAVE, makeBobbin, N } from "./spawn-await.js";
import { asyncPingPong } from "./switch.js";

export const SCENARIO = "spawn+await, traces";
export const PARK_SCENARIO = "park + wake, traces";
const ROUNDS = 200_000;

/** Two tasks hand a turn back and forth `total / 2` times each, each parking on its trigger until the other signals it. */
function makePingPong(B, L, traces) {
  function* player(turns, mine, other) {
    for (let i = 0; i < turns; i++) {
      other.value.signal();
      mine.value = new L.Trigger();
      yield* mine.value.wait();
    }
    other.value.signal();
    return turns;
  }
  return (total) =>
    B.run(
      function* () {
        const a = { value: new L.Trigger() };
        const b = { value: new L.Trigger() };
        const ta = B.spawn(player, total / 2, a, b);
        const tb = B.spawn(player, total / 2, b, a);
        return (yield* B.awaitExn(ta)) + (yield* B.awaitExn(tb));
      },
      { traces },
    );
}

export function contenders({ B, bobbinError }) {
  const error = bobbinError;
  return [
    { contender: "async/await", anchor: "async", n: N, fn: asyncParent },
    { contender: "Bobbin, traces off", n: N, fn: B ? makeBobbin(B, { traces: false }) : null, error },
    { contender: "Bobbin, traces on", n: N, fn: B ? makeBobbin(B, { traces: true }) : null, error },
  ];
}

function parkContenders({ B, L, bobbinError }) {
  const error = bobbinError;
  const scenario = PARK_SCENARIO;
  return [
    { scenario, contender: "async/await (`await null`)", anchor: "async", n: ROUNDS, fn: asyncPingPong },
    { scenario, contender: "Bobbin, traces off", n: ROUNDS, fn: B ? makePingPong(B, L, false) : null, error },
    { scenario, contender: "Bobbin, traces on", n: ROUNDS, fn: B ? makePingPong(B, L, true) : null, error },
  ];
}

export async function run(results, ctx) {
  // The rows of a scenario share rounds, as spawn+await's and the context switch's do (see harness.js), spawn + await's timed as its row is.
  await runContenders(results, contenders(ctx), { scenario: SCENARIO, expect: expected, interleave: INTERLEAVE });
  await runContenders(results, parkContenders(ctx), { scenario: PARK_SCENARIO, expect: (n) => n, interleave: { iters: 9, clock: "cpu" } });
}
