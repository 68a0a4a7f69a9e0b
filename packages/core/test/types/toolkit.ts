/**
 * The toolkit's types: a file checked by `tsc` (`pnpm typecheck`), never run.
 * An `expectTypeOf` line fails the type-check when a type is not the one
 * stated, and a `@ts-expect-error` line fails it when the line below it is
 * not an error. The functions are declared only to hold the checks.
 */
import { EventEmitter } from "node:events";
import { expectTypeOf } from "vitest";
import * as B from "../../src/index.js";
import type * as L from "../../src/lowlevel/index.js";

declare const num: B.Operation<number>;
declare const str: B.Operation<string>;
declare const a: L.SelectCase<number>;
declare const b: L.SelectCase<B.Received<string>>;
declare function fetchUser(id: number): Generator<B.Instruction, { name: string }, unknown>;

export function all(): void {
  expectTypeOf(B.all([num, str])).toEqualTypeOf<B.Operation<[number, string]>>();
  expectTypeOf(B.all([fetchUser(1), num])).toEqualTypeOf<B.Operation<[{ name: string }, number]>>();
  const many: B.Operation<number>[] = [num, num];
  expectTypeOf(B.all(many)).toEqualTypeOf<B.Operation<number[]>>();
  expectTypeOf(B.all([])).toEqualTypeOf<B.Operation<[]>>();
  function* use(): Generator<B.Instruction, void, unknown> {
    const [n, s] = yield* B.all([num, str]);
    expectTypeOf(n).toEqualTypeOf<number>();
    expectTypeOf(s).toEqualTypeOf<string>();
    // @ts-expect-error: a forgotten yield* leaves an operation where a value was expected
    const values: [number, string] = B.all([num, str]);
    void values;
  }
  void use;
}

export function anyAndRace(): void {
  expectTypeOf(B.any([num, str])).toEqualTypeOf<B.Operation<number | string>>();
  expectTypeOf(B.race([num, fetchUser(2)])).toEqualTypeOf<B.Operation<number | { name: string }>>();
  // @ts-expect-error: tasks are awaited (awaitAll), not run
  B.all([B.spawn(function* () {})]);
}

export function group(): void {
  function* worker(n: number, label: string): Generator<B.Instruction, boolean, unknown> {
    return n > 0 && label !== "";
  }
  const op = B.group({ limit: 4 }, function* (g) {
    expectTypeOf(g).toEqualTypeOf<B.Group>();
    expectTypeOf(g.spawn(worker, 1, "a")).toEqualTypeOf<B.Task<boolean>>();
    expectTypeOf(g.spawn({ name: "w" }, worker, 1, "a")).toEqualTypeOf<B.Task<boolean>>();
    // @ts-expect-error: worker takes (number, string)
    g.spawn(worker, "1", "a");
    // @ts-expect-error: a group's task belongs to the group, not to a collector
    g.spawn({ orphans: B.orphans() }, worker, 1, "a");
    return "done" as const;
  });
  expectTypeOf(op).toEqualTypeOf<B.Operation<"done">>();
}

export function forEachAndMap(): void {
  expectTypeOf(
    B.map([1, 2], function* (n, i) {
      expectTypeOf(n).toEqualTypeOf<number>();
      expectTypeOf(i).toEqualTypeOf<number>();
      return String(n);
    }),
  ).toExtend<B.Operation<string[]>>();
  expectTypeOf(B.forEach(new Set(["a"]), function* () {}, { concurrency: 2 })).toExtend<B.Operation<void>>();
}

export function select(): void {
  const op = B.select([a, b, B.timeout(10)]);
  expectTypeOf(op).toEqualTypeOf<
    B.Operation<
      | { readonly index: 0; readonly value: number }
      | { readonly index: 1; readonly value: B.Received<string> }
      | { readonly index: 2; readonly value: undefined }
    >
  >();
  function* use(): Generator<B.Instruction, void, unknown> {
    const r = yield* B.select([a, b]);
    if (r.index === 0) expectTypeOf(r.value).toEqualTypeOf<number>();
    else if (!r.value.done) expectTypeOf(r.value.value).toEqualTypeOf<string>();
    // @ts-expect-error: select takes select cases, not any operation
    B.select([num]);
  }
  void use;
  expectTypeOf(B.timeout(5)).toExtend<B.Operation<void>>();
}

export function onceAndOn(): void {
  const emitter = new EventEmitter();
  expectTypeOf(B.once<[number]>(emitter, "exit")).toEqualTypeOf<L.SelectCase<[number]>>();
  const lines = B.on<[string]>(emitter, "line", { close: "close" });
  expectTypeOf(lines.next()).toEqualTypeOf<L.SelectCase<B.Received<[string]>>>();
  expectTypeOf(B.once(new EventTarget(), "ping")).toEqualTypeOf<L.SelectCase<unknown[]>>();
  // @ts-expect-error: not an event source
  B.once(42, "x");
  lines.close();
}

export function spawnBodies(): void {
  function* use(): Generator<B.Instruction, void, unknown> {
    // A task's body returns an operation: a generator function, or a function returning an operation.
    expectTypeOf(
      B.spawn(function* () {
        return 1;
      }),
    ).toEqualTypeOf<B.Task<number>>();
    expectTypeOf(B.spawn((): B.Operation<number> => num)).toEqualTypeOf<B.Task<number>>();
    expectTypeOf(B.spawn((_n: number): B.Operation<string> => str, 1)).toEqualTypeOf<B.Task<string>>();
    expectTypeOf(B.spawn({ name: "later" }, (): B.Operation<void> => B.yieldNow())).toEqualTypeOf<B.Task<void>>();
    // @ts-expect-error: an async function is no task body (its awaits would run outside the scheduler)
    B.spawn(async () => 1);
    // @ts-expect-error: nor a function that returns a value rather than an operation
    B.spawn(() => 1);
    // @ts-expect-error: the arguments are the body's
    B.spawn((_n: number): B.Operation<string> => str, "1");
    yield* B.yieldNow();
  }
  void use;
}
