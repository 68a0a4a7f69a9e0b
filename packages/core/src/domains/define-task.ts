/**
 * `defineTask`: a task body that other domains (worker threads) can find
 * again. Functions cannot cross threads, so a parallel task is named by the
 * module that defines it and a name; a worker imports that module, which
 * defines the task again in the worker.
 */
import { describe } from "../describe.js";
import type { TaskBody } from "../operation.js";
import { checkNotAsync } from "../spawn.js";
import { definitionAdded, loadDefinition } from "./loading.js";
import { checkModuleUrl } from "./module-url.js";

declare const parallelBrand: unique symbol;

/**
 * A task body that can run on another domain, made by {@link defineTask}.
 *
 * @example
 * ```ts
 * export const fib: B.ParallelTask<[number], number> = B.defineTask(import.meta.url, "fib", fibBody);
 * ```
 */
export interface ParallelTask<A extends unknown[], T> {
  readonly url: string;
  readonly name: string;
  readonly body: TaskBody<A, T>;
  readonly [parallelBrand]?: "ParallelTask";
}

const tasks = new Map<string, TaskBody<unknown[], unknown>>();
/** The tasks `defineTask` made: only their URLs go in call messages (see loading.ts). */
const made = new WeakSet<object>();

/** @internal The key of a definition: its module and name. */
export const key = (url: string, name: string): string => `${url}#${name}`;

/**
 * Defines a task that `call` and `parallel` can run on other domains. Call it
 * at the top level of a module without other side effects (workers import
 * that module), with that module's `import.meta.url`.
 *
 * @example
 * ```ts
 * // fib.ts
 * export const fib = B.defineTask(import.meta.url, "fib", function* (n: number): Generator<B.Instruction, number> {
 *   return n < 2 ? n : (yield* B.awaitExn(B.spawn(fib.body, n - 1))) + (yield* B.awaitExn(B.spawn(fib.body, n - 2)));
 * });
 * // main.ts
 * const t = B.call(fib, 30);
 * ```
 * @throws TypeError when `url` is not a module URL, `name` is empty, or `body`
 * is not a generator function; when the same name is defined twice in a module with another body.
 */
export function defineTask<A extends unknown[], T>(url: string, name: string, body: TaskBody<A, T>): ParallelTask<A, T> {
  checkName(url, name, "defineTask");
  if (typeof body !== "function")
    throw new TypeError(`defineTask(url, "${name}", body) expects a generator function as body, got ${describe(body)}`);
  checkNotAsync(body, `defineTask(url, "${name}", body)`);
  const k = key(url, name);
  const known = tasks.get(k);
  if (known !== undefined && known !== body) {
    throw new TypeError(`defineTask: ${name} is defined twice in ${url}; give each parallel task its own name`);
  }
  tasks.set(k, body as TaskBody<unknown[], unknown>);
  definitionAdded();
  const task = Object.freeze({ url, name, body });
  made.add(task);
  return task;
}

/** @internal A task body defined in this thread, if its module was loaded here. */
export function definedTask(url: string, name: string): TaskBody<unknown[], unknown> | undefined {
  return tasks.get(key(url, name));
}

/** @internal Loads the module of a task in this thread and returns its body. */
export function loadTask(url: string, name: string): Promise<TaskBody<unknown[], unknown>> {
  return loadDefinition(
    url,
    () => tasks.get(key(url, name)),
    () => new TypeError(`module ${url} does not define a parallel task named "${name}" with defineTask at its top level`),
    () => stalledOn(url, `the parallel task "${name}"`),
  );
}

/** @internal Why a worker domain did not find a definition in the module it imported. */
export function stalledOn(url: string, what: string): TypeError {
  return new TypeError(
    `a worker domain imported ${url} to find ${what}, but that module awaits run() at its top level before defining it ` +
      "(in a worker domain, run() outside a task does nothing and never settles): define parallel tasks above the call " +
      "of run(), or better, in a module of their own that only defines things",
  );
}

/** @internal Whether `value` is a task `defineTask` made (an object of the same shape made otherwise is not). */
export function isParallelTask(value: unknown): value is ParallelTask<unknown[], unknown> {
  return typeof value === "object" && value !== null && made.has(value);
}

/** @internal Checks the url and name of a definition. */
export function checkName(url: string, name: string, caller: string): void {
  checkModuleUrl(url, `${caller}(url, name, …)`);
  if (typeof name !== "string" || name.length === 0) throw new TypeError(`${caller}(url, name, …) expects a non-empty name`);
}
