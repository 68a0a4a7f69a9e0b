/**
 * The channels' types: a file checked by `tsc` (`pnpm typecheck`), never run.
 * An `expectTypeOf` line fails the type-check when a type is not the one
 * stated, and a `@ts-expect-error` line fails it when the line below it is
 * not an error. The functions are declared only to hold the checks.
 */
import * as B from "@bobbin/core";
import type * as L from "@bobbin/core/lowlevel";
import { expectTypeOf } from "vitest";
import { Broadcast, type BroadcastReceived, Channel, type EMPTY, END } from "../../src/index.js";

export function channel(): void {
  const ch = new Channel<number>(4);
  expectTypeOf(ch.recv()).toEqualTypeOf<L.SelectCase<number | typeof END>>();
  expectTypeOf(ch.send(1)).toEqualTypeOf<L.SelectCase<void>>();
  expectTypeOf(ch.tryRecv()).toEqualTypeOf<number | typeof END | typeof EMPTY>();
  // @ts-expect-error: a Channel<number> takes numbers
  ch.send("one");
  function* use(): Generator<B.Instruction, void, unknown> {
    const v = yield* ch.recv();
    if (v !== END) expectTypeOf(v).toEqualTypeOf<number>();
    // @ts-expect-error: until END is ruled out, the value may be END
    const n: number = v;
    void n;
    for (let w = yield* ch.recv(); w !== END; w = yield* ch.recv()) expectTypeOf(w).toEqualTypeOf<number>();
  }
  void use;
}

export function selectOverChannels(): void {
  const jobs = new Channel<string>();
  const results = new Channel<number>();
  function* use(): Generator<B.Instruction, void, unknown> {
    const r = yield* B.select([jobs.recv(), results.send(1), B.timeout(100)]);
    if (r.index === 0) expectTypeOf(r.value).toEqualTypeOf<string | typeof END>();
    else if (r.index === 2) expectTypeOf(r.value).toEqualTypeOf<undefined>();
    expectTypeOf(r.index).toEqualTypeOf<0 | 1 | 2>();
  }
  void use;
}

export function broadcast(): void {
  const room = new Broadcast<string>(16);
  const sub = room.subscribe();
  expectTypeOf(sub.recv()).toEqualTypeOf<L.SelectCase<BroadcastReceived<string>>>();
  expectTypeOf(room.publish("hi")).toEqualTypeOf<number>();
  function* wrong(): Generator<B.Instruction, void, unknown> {
    // @ts-expect-error: publishing never waits: there is nothing to yield*
    yield* room.publish("hi");
  }
  void wrong;
}
