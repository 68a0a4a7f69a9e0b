/**
 * `forEach` and `map`: one task per item, in a group with a concurrency limit.
 */
import { describe } from "./describe.js";
import { checkLimit, type Group, group } from "./group.js";
import { runningKernel } from "./kernel/kernel.js";
import { outcomeOf } from "./kernel/state.js";
import type { Task } from "./kernel/task.js";
import type { Instruction, TaskBody } from "./operation.js";
import { isGeneratorFunction, makeChild } from "./spawn.js";

/**
 * Options of {@link forEach} and {@link map}.
 *
 * @example
 * ```ts
 * yield* B.forEach(urls, crawl, { concurrency: 8 });   // at most 8 crawls at once
 * ```
 */
export interface ForEachOptions {
  /** How many items are worked on at once: an integer ≥ 1, or `Infinity` (the default). */
  readonly concurrency?: number | undefined;
}

/**
 * Runs `fn(item, index)` for every item in a task of a group, until all have
 * ended; `tasks`, when given, receives the tasks in the order of the items.
 * An item becomes a task only once a place under the limit is free for it
 * (see `Feed`), and the tasks are kept only for `map`'s values.
 */
function* spawnEach<T, R>(
  items: Iterable<T>,
  fn: TaskBody<[T, number], R>,
  options: ForEachOptions,
  name: string,
  tasks: Task<R>[] | null,
): Generator<Instruction, void, unknown> {
  if (items === null || typeof (items as Iterable<T> | undefined)?.[Symbol.iterator] !== "function") {
    throw new TypeError(`${name}(items, fn) expects an iterable of items, got ${describe(items)}`);
  }
  if (typeof fn !== "function") throw new TypeError(`${name}(items, fn) expects a generator function fn(item, index), got ${describe(fn)}`);
  if (options === null || typeof options !== "object") {
    throw new TypeError(`${name}(items, fn, options) expects options { concurrency }, got ${describe(options)}`);
  }
  const limit = checkLimit(options.concurrency, `${name}({ concurrency })`);
  const list = Array.from(items);
  const k = runningKernel()!;
  let next = 0;
  const feed = (owner: Task): Task | null => {
    if (next === list.length) return null;
    const i = next++;
    const task = makeChild(k, owner, owner, undefined, fn, 2, [list[i], i], name) as Task<R>;
    tasks?.push(task);
    return task;
  };
  yield* group({ limit, name }, function* (g: Group) {
    if (isGeneratorFunction(fn)) g.feed(feed);
    else {
      // Any other body is called as its task is made (see makeChild): all are made here, in a task.
      for (let i = 0; i < list.length; i++) {
        const task = g.spawn(fn, list[i]!, i);
        tasks?.push(task);
      }
    }
  });
}

/**
 * Runs `fn(item, index)` for every item, each in a task of a group, at most
 * `concurrency` at once (the others wait their turn, in order), and returns
 * once all have ended. The first failure cancels the rest (waiting items never
 * start) and is thrown (with the errors of the items that failed while
 * cancelled, in a `Failures`, when there are any).
 *
 * @example
 * ```ts
 * yield* B.forEach(urls, function* (url) { yield* crawl(url); }, { concurrency: 8 });
 * ```
 * @throws the first error of `fn` (a `Failures`, that error first, when items also failed while cancelled).
 * @throws RangeError when `concurrency` is not an integer ≥ 1 or `Infinity`.
 * @throws TypeError when `items` is not iterable or `fn` not a generator function; outside a task.
 * @throws Cancelled when the current task is cancelled (after every task ended).
 */
export function* forEach<T>(
  items: Iterable<T>,
  fn: TaskBody<[T, number], unknown>,
  options: ForEachOptions = {},
): Generator<Instruction, void, unknown> {
  yield* spawnEach(items, fn, options, "forEach", null);
}

/**
 * Like {@link forEach}, and returns what `fn` returned for each item, in the
 * order of the items.
 *
 * @example
 * ```ts
 * const sizes = yield* B.map(files, function* (path) { return (yield* stat(path)).size; }, { concurrency: 4 });
 * ```
 * @throws the first error of `fn` (a `Failures`, that error first, when items also failed while cancelled).
 * @throws RangeError when `concurrency` is not an integer ≥ 1 or `Infinity`.
 * @throws TypeError when `items` is not iterable or `fn` not a generator function; outside a task.
 * @throws Cancelled when the current task is cancelled (after every task ended).
 */
export function* map<T, R>(
  items: Iterable<T>,
  fn: TaskBody<[T, number], R>,
  options: ForEachOptions = {},
): Generator<Instruction, R[], unknown> {
  const tasks: Task<R>[] = [];
  yield* spawnEach(items, fn, options, "map", tasks);
  return tasks.map(outcomeOf);
}
