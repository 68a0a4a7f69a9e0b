import { noFloatingOperation } from "../../src/rules/no-floating-operation.js";
import { typedRuleTester } from "../support/rule-tester.js";

/** What every case can use: the real packages, and values of their types. */
const PRELUDE = `import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import * as S from "@bobbin/sync";
import * as U from "@bobbin/unix";
import * as K from "@bobbin/unix/backend";
declare const c: U.Socket;
declare const t: B.Task<number>;
declare const m: S.Mutex;
declare const trigger: L.Trigger;
declare const ready: boolean;
declare const maybe: S.Mutex | undefined;
`;

/** `body` as the body of a task (a generator function), after the prelude. */
function task(body: string): string {
  return `${PRELUDE}export function* main(): Generator<B.Instruction, void, unknown> {\n${body}\n}\n`;
}

/** An invalid case inside a task: one report, and a suggestion that puts `yield*` in front. */
function floating(statement: string, fixed: string) {
  return {
    code: task(statement),
    errors: [{ messageId: "floating" as const, suggestions: [{ messageId: "runIt" as const, output: task(fixed) }] }],
  };
}

typedRuleTester().run("no-floating-operation", noFloatingOperation, {
  valid: [
    // Consumed, stored, passed on, returned, discarded on purpose.
    task(`yield* U.write(c, "hi");`),
    task("yield* B.yieldNow();"),
    task("const n: number = yield* B.awaitExn(t);\nvoid n;"),
    task("const op = U.sleep(1);\nyield* op;"),
    task("let op: B.Operation<void>;\nop = U.sleep(1);\nyield* op;"),
    task("const ops: B.Operation<void>[] = [];\nops.push(U.sleep(1));\nyield* ops[0]!;"),
    task("void U.sleep(1);"),
    `${PRELUDE}export function later(): B.Operation<void> { return U.sleep(1); }`,
    `${PRELUDE}export const later = () => U.sleep(1);`,
    // Statements whose value is not an operation.
    task("B.spawn(function* () { return 1; });"),
    task("trigger.signal();"),
    task("m.unlock();"),
    task("U.shutdown(c);"),
    // Iterables and generators of anything but core's instructions.
    task("function* numbers() { yield 1; }\nnumbers();"),
    task("[1, 2].values();"),
    task("new Set([1]);"),
    task(`"a string is iterable";`),
    task("declare const anything: any;\nanything;"),
  ],
  invalid: [
    // Core.
    floating("B.yieldNow();", "yield* B.yieldNow();"),
    floating("B.awaitExn(t);", "yield* B.awaitExn(t);"),
    floating("B.cancel(t);", "yield* B.cancel(t);"),
    floating("trigger.wait();", "yield* trigger.wait();"),
    floating("L.suspend(L.syscall());", "yield* L.suspend(L.syscall());"),
    // Unix and sync.
    floating(`U.write(c, "hi");`, `yield* U.write(c, "hi");`),
    floating("U.sleep(1);", "yield* U.sleep(1);"),
    floating("U.accept(c);", "yield* U.accept(c);"),
    floating("U.close(c);", "yield* U.close(c);"),
    floating("m.lock();", "yield* m.lock();"),
    floating("U.withTimeout(1, U.read(c, new Uint8Array(4)));", "yield* U.withTimeout(1, U.read(c, new Uint8Array(4)));"),
    // Whatever the expression: a bare reference, a sequence.
    floating("const op = U.sleep(1);\nop;", "const op = U.sleep(1);\nyield* op;"),
    floating("B.yieldNow(), U.sleep(1);", "yield* (B.yieldNow(), U.sleep(1));"),
    // User-defined operations, generic ones included.
    floating(
      "function twice<T>(op: B.Operation<T>): B.Operation<[T, T]> { return B.awaitExn(B.spawn(function* () { return [yield* op, yield* op] as [T, T]; })); }\ntwice(U.sleep(1));",
      "function twice<T>(op: B.Operation<T>): B.Operation<[T, T]> { return B.awaitExn(B.spawn(function* () { return [yield* op, yield* op] as [T, T]; })); }\nyield* twice(U.sleep(1));",
    ),
    floating(
      "function* pause(seconds: number): Generator<B.Instruction, number, unknown> { yield* U.sleep(seconds); return seconds; }\npause(1);",
      "function* pause(seconds: number): Generator<B.Instruction, number, unknown> { yield* U.sleep(seconds); return seconds; }\nyield* pause(1);",
    ),
    floating(
      "class Repeat<T> implements B.Operation<T[]> {\n  constructor(private readonly op: () => B.Operation<T>, private readonly n: number) {}\n  *[Symbol.iterator](): Generator<B.Instruction, T[], unknown> { const out: T[] = []; for (let i = 0; i < this.n; i++) out.push(yield* this.op()); return out; }\n}\nnew Repeat(() => B.yieldNow(), 3);",
      "class Repeat<T> implements B.Operation<T[]> {\n  constructor(private readonly op: () => B.Operation<T>, private readonly n: number) {}\n  *[Symbol.iterator](): Generator<B.Instruction, T[], unknown> { const out: T[] = []; for (let i = 0; i < this.n; i++) out.push(yield* this.op()); return out; }\n}\nyield* new Repeat(() => B.yieldNow(), 3);",
    ),
    floating(
      "function* retry<O extends B.Operation<number>>(op: O): Generator<B.Instruction, void, unknown> { op; }\nvoid retry;",
      "function* retry<O extends B.Operation<number>>(op: O): Generator<B.Instruction, void, unknown> { yield* op; }\nvoid retry;",
    ),
    // A backend operation of @bobbin/unix's (its iterator is `this`).
    floating(
      'class Never extends K.Parked<number> {\n  protected attempt() { return false; }\n  protected wait() {}\n  protected leave() {}\n}\nnew Never({ signal() {} }, "never");',
      'class Never extends K.Parked<number> {\n  protected attempt() { return false; }\n  protected wait() {}\n  protected leave() {}\n}\nyield* new Never({ signal() {} }, "never");',
    ),
    // An operation or something else (a forgotten `yield*` all the same): no suggestion, `yield*` would not type-check.
    { code: task("ready && U.sleep(1);"), errors: [{ messageId: "floating", suggestions: [] }] },
    { code: task("maybe?.lock();"), errors: [{ messageId: "floating", suggestions: [] }] },
    // Outside a generator function `yield*` cannot be written: the message says so, with no suggestion.
    {
      code: `${PRELUDE}export function start(): void {\n  U.sleep(1);\n}\n`,
      errors: [{ messageId: "floatingOutsideGenerator", suggestions: [] }],
    },
    {
      code: task("[1, 2].forEach(() => {\n  U.sleep(1);\n});"),
      errors: [{ messageId: "floatingOutsideGenerator", suggestions: [] }],
    },
    {
      code: `${PRELUDE}U.sleep(1);\n`,
      errors: [{ messageId: "floatingOutsideGenerator", line: 12, suggestions: [] }],
    },
  ],
});
