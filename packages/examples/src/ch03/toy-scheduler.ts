/**
 * Chapter 3, "A simple scheduler": the book's toy scheduler (a task list,
 * `spawn` and `await`), rebuilt on generators instead of OCaml 5 effects.
 *
 * The translation is direct. An effect suspends the function that performs
 * it and hands the effect to a handler, which resumes the function later
 * with a value (`continue k v`). A generator does the same thing: `yield
 * effect` suspends the generator and hands `effect` to whoever calls
 * `next()`, which resumes it with `next(v)`. So:
 *
 * | the book (OCaml 5)                       | here (TypeScript)                           |
 * |------------------------------------------|---------------------------------------------|
 * | `type _ Effect.t += Spawn : …`           | `{ kind: "spawn", fn }`, an {@link Effect}  |
 * | `Effect.perform (Spawn fn)`              | `yield* spawn(fn)` (yields the effect)      |
 * | the continuation `k`                     | the suspended `Generator` itself            |
 * | `continue_with k v handler`              | `k.next(v)`, then {@link handle}            |
 * | `'a promise = 'a option ref`             | {@link ToyPromise}                          |
 *
 * Nothing here uses `@bobbin/core`: this is the scheduler the book builds to
 * explain what every scheduler does. `@bobbin/core` is the real one.
 */

/**
 * A fiber of the toy scheduler: a generator function whose `yield`s are
 * effects for the scheduler.
 *
 * @example
 * ```ts
 * const fn: Fiber<void> = function* () { console.log("World"); };
 * ```
 */
export type Fiber<T> = () => Generator<Effect, T, unknown>;

/**
 * The book's promise, `'a option ref`: a box that holds the task's result
 * once the task is done (`value` is `null` until then).
 */
export interface ToyPromise<T> {
  value: { readonly some: T } | null;
}

/** What a fiber asks of the scheduler: the book's `Spawn` and `Await` effects. */
export type Effect =
  | { readonly kind: "spawn"; readonly fn: Fiber<unknown> }
  | { readonly kind: "await"; readonly promise: ToyPromise<unknown> };

/**
 * The state of a task, as in the book: not started yet, suspended on an
 * effect (with its continuation), or resolved.
 */
export type State =
  | { readonly kind: "initial"; readonly fn: Fiber<unknown> }
  | { readonly kind: "suspended"; readonly k: Generator<Effect, unknown, unknown>; readonly effect: Effect }
  | { readonly kind: "resolved"; readonly value: unknown };

/** What {@link perform} decides: resume the fiber with a value, or let other tasks run first. */
export type Performed = { readonly kind: "continue"; readonly value: unknown } | { readonly kind: "yield" };

/**
 * `Effect.perform (Spawn fn)`: asks the scheduler to run `fn` in the
 * background and returns at once with a promise of its result.
 *
 * @example
 * ```ts
 * const prm = yield* spawn(function* () { console.log("World"); });
 * ```
 */
export function* spawn<T>(fn: Fiber<T>): Generator<Effect, ToyPromise<T>, unknown> {
  return (yield { kind: "spawn", fn }) as ToyPromise<T>;
}

/**
 * `Effect.perform (Await prm)`: the result of a spawned task, once it is
 * there. Until then the scheduler runs the other tasks (the fiber "yields").
 *
 * @example
 * ```ts
 * const n = yield* awaitPromise(prm);
 * ```
 */
export function* awaitPromise<T>(promise: ToyPromise<T>): Generator<Effect, T, unknown> {
  return (yield { kind: "await", promise: promise as ToyPromise<unknown> }) as T;
}
export { awaitPromise as await };

/**
 * The book's effect handler (`retc` and `effc`): a fiber that returned is
 * resolved, a fiber that yielded an effect is suspended on it.
 */
export function handle(k: Generator<Effect, unknown, unknown>, r: IteratorResult<Effect, unknown>): State {
  return r.done === true ? { kind: "resolved", value: r.value } : { kind: "suspended", k, effect: r.value };
}

/**
 * The book's `perform`: `Spawn` appends a task to the to-do list and
 * continues with its promise; `Await` continues with the result if the
 * promise is resolved, and yields otherwise.
 */
export function perform(todo: State[], effect: Effect): Performed {
  switch (effect.kind) {
    case "spawn": {
      const promise: ToyPromise<unknown> = { value: null };
      const fn = effect.fn;
      todo.push({
        kind: "initial",
        fn: function* () {
          promise.value = { some: yield* fn() };
        },
      });
      return { kind: "continue", value: promise };
    }
    case "await":
      return effect.promise.value !== null ? { kind: "continue", value: effect.promise.value.some } : { kind: "yield" };
  }
}

/**
 * The book's `step`: starts an initial task, or performs the effect a
 * suspended task is waiting on and resumes it if it may continue.
 */
export function step(todo: State[], task: State): State {
  switch (task.kind) {
    case "initial": {
      const k = task.fn();
      return handle(k, k.next());
    }
    case "resolved":
      return task;
    case "suspended": {
      const performed = perform(todo, task.effect);
      return performed.kind === "continue" ? handle(task.k, task.k.next(performed.value)) : task;
    }
  }
}

/** The main task of a run and where its result goes (see {@link start}). */
export interface Main<T> {
  /** The to-do list, starting with the main task. */
  readonly todo: State[];
  /** The main task's result, once it has one. */
  readonly result: ToyPromise<T>;
}

/**
 * The first lines of the book's `run`: a to-do list holding the main task,
 * which puts what `fn` returns into `result`. Chapter 4's `run` starts the same.
 */
export function start<T>(fn: Fiber<T>): Main<T> {
  const result: ToyPromise<T> = { value: null };
  return {
    result,
    todo: [
      {
        kind: "initial",
        fn: function* () {
          result.value = { some: yield* fn() };
        },
      },
    ],
  };
}

/**
 * One turn of the book's `run` loop: steps the first task of the to-do list
 * and puts it back at the end if it is not resolved. False once the list is
 * empty.
 */
export function tick(todo: State[]): boolean {
  const task = todo.shift();
  if (task === undefined) return false;
  const next = step(todo, task);
  if (next.kind !== "resolved") todo.push(next);
  return true;
}

/** The main task's result once the to-do list is empty (the last line of the book's `run`). */
export function finish<T>(main: Main<T>): T {
  if (main.result.value === null) throw new Error("run: the main task did not finish");
  return main.result.value.some;
}

/**
 * The book's `run`: steps the tasks of the to-do list in turn, putting back
 * at the end those that are not resolved, until the list is empty; then
 * returns the result of `fn`.
 *
 * @example
 * ```ts
 * run(function* () {
 *   const prm = yield* spawn(function* () { console.log("World"); });
 *   console.log("Hello");
 *   yield* awaitPromise(prm);
 * });   // prints Hello, then World
 * ```
 */
export function run<T>(fn: Fiber<T>): T {
  const main = start(fn);
  while (tick(main.todo)); // one step after another, until the to-do list is empty
  return finish(main);
}
