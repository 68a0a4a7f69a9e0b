/**
 * Receiving until the end, for the channel and broadcast tests. Apart from
 * `helpers.ts`, which the domain tests share: those run against the built
 * package, and importing the sources there too would load the package twice.
 */
import type * as B from "@bobbin/core";
import { type Channel, END, type Subscription } from "../src/index.js";

/** Receives from a channel until it ends; returns the values. */
export function* drain<T>(ch: Channel<T>): Generator<B.Instruction, T[], unknown> {
  const got: T[] = [];
  for (let v = yield* ch.recv(); v !== END; v = yield* ch.recv()) got.push(v);
  return got;
}

/** Receives from a subscription until it is done; returns the values. */
export function* drainSubscription<T>(sub: Subscription<T>): Generator<B.Instruction, T[], unknown> {
  const got: T[] = [];
  for (let r = yield* sub.recv(); !r.done; r = yield* sub.recv()) got.push(r.value);
  return got;
}
