/**
 * Chapter 5's parallel tasks. Worker domains import this module to find
 * them again, so it only defines things (no top-level side effects).
 */
import * as B from "@bobbin/core";

/** `fun () -> 1 + 1`, with its operands as arguments (closures do not cross threads). */
export const add = B.defineTask(import.meta.url, "add", function* (a: number, b: number) {
  return a + b;
});

/** `fun () -> Miou.yield ()`. */
export const yieldOnce = B.defineTask(import.meta.url, "yieldOnce", function* () {
  yield* B.yieldNow();
});

/** The book's `let rec infinite () = infinite (Miou.yield ())`: runs until cancelled. */
export const infinite = B.defineTask(import.meta.url, "infinite", function* (): Generator<B.Instruction, never, unknown> {
  for (;;) yield* B.yieldNow();
});

/** Prints "My parallel task." on its domain and says which domain that was. */
export const myParallelTask = B.defineTask(import.meta.url, "myParallelTask", function* () {
  console.log("My parallel task.");
  return B.Domain.self();
});

/** The book's `task () : int = Stdlib.Domain.self ()`: the domain it runs on (its argument is OCaml's `()`). */
// biome-ignore lint/suspicious/noConfusingVoidType: the argument stands for OCaml's `()`, which callers omit
export const domainSelf = B.defineTask(import.meta.url, "domainSelf", function* (_unit: void) {
  return B.Domain.self();
});

/** `let u = Domain.self () in let q = Miou.call Domain.self in (u, await q)`: a parallel task calling another. */
export const selfAndCallee = B.defineTask(import.meta.url, "selfAndCallee", function* () {
  const u = B.Domain.self();
  const q = B.call(domainSelf);
  return [u, yield* B.awaitExn(q)] as [number, number];
});
