// Scenario — the diagnostics channels' cost: spawn-await.js's spawn + await
// of 100k children while nobody subscribes to Bobbin's diagnostics
// channels, after a subscriber came and went, and with subscribers.
//
// While nobody subscribes the kernel keeps no tracer (it asks
// `hasSubscribers` once per slice of its loop, not per step), so the first
// two Bobbin rows must match spawn+await's Bobbin row (the same program);
// the subscribed rows show what publishing costs (a message object per task
// and point, delivered to an empty function).

import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { runContenders } from "./harness.js";
import { asyncParent, expected, makeBobbin, N } from "./spawn-await.js";

export const SCENARIO = "spawn+await, diagnostics channels";

/** Runs `fn` with an empty subscriber on each of `names`, unsubscribed afterwards. */
function subscribed(names, fn) {
  const listener = () => {};
  return async (n) => {
    for (const name of names) subscribe(name, listener);
    try {
      return await fn(n);
    } finally {
      for (const name of names) unsubscribe(name, listener);
    }
  };
}

/** Subscribes to each of `names` and leaves again before `fn` runs. */
function cameAndWent(names, fn) {
  const listener = () => {};
  return (n) => {
    for (const name of names) subscribe(name, listener);
    for (const name of names) unsubscribe(name, listener);
    return fn(n);
  };
}

export function contenders({ B, bobbinError }) {
  const hasChannels = B && typeof B.channels === "object";
  const error = bobbinError ?? (B && !hasChannels ? "@bobbin/core has no B.channels (build it)" : undefined);
  const bobbin = hasChannels ? makeBobbin(B) : null;
  const all = hasChannels ? Object.values(B.channels.task) : [];
  const note = "the program of spawn+await's Bobbin row: free channels make the two equal, within noise";
  return [
    { contender: "async/await", anchor: "async", n: N, fn: asyncParent },
    { contender: "Bobbin, nobody subscribes", n: N, fn: bobbin, error, note },
    { contender: "Bobbin, a subscriber came and went", n: N, fn: bobbin && cameAndWent(all, bobbin), error, note },
    {
      contender: "Bobbin, a subscriber on task:end",
      n: N,
      fn: bobbin && subscribed([B.channels.task.end], bobbin),
      error,
    },
    { contender: "Bobbin, subscribers on every task channel", n: N, fn: bobbin && subscribed(all, bobbin), error },
  ];
}

export async function run(results, ctx) {
  await runContenders(results, contenders(ctx), { scenario: SCENARIO, expect: expected });
}
