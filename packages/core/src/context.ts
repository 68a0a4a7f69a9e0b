/**
 * Context values (`B.createContext`): a value given to a task for a stretch
 * of its body, seen by it and by every task spawned beneath it meanwhile, and
 * sent along to other domains with a `call`.
 */
import { describe } from "./describe.js";
import { encodePortables } from "./domains/portable.js";
import { Uncloneable } from "./errors.js";
import { type ContextFrame, contextOf, setContext } from "./kernel/context.js";
import { currentTask } from "./kernel/current.js";
import type { Task } from "./kernel/task.js";
import type { Instruction, Operation } from "./operation.js";

/**
 * Options of {@link createContext}.
 *
 * @example
 * ```ts
 * const logger = B.createContext("logger", console, { crossesDomains: false });   // stays on its thread
 * ```
 */
export interface ContextOptions {
  /**
   * Whether a value given to the context goes along with a `call` or
   * `parallel` to another domain (default `true`). A value that goes along
   * must be structured-cloneable (or a portable: see `definePortable`); give
   * `false` for values that belong to one thread (a logger, a socket): tasks
   * on other domains then see the default.
   */
  readonly crossesDomains?: boolean | undefined;
}

/** The contexts of this thread, by name: a name identifies a context's value in every domain. */
const names = new Set<string>();

/**
 * A value that follows the task tree: given with `with` to the current task
 * for the length of a body, it is seen by that task and by every task spawned
 * beneath it during the body (children, grandchildren, and the tasks of a
 * `call` on another domain, which get a copy); `get` reads the nearest value,
 * or the default. Siblings and the parent never see it. Make one with
 * {@link createContext}.
 *
 * Use a Context for what a subtree shares (a request id, a deadline budget, a
 * tenant, a logger); use a {@link TaskLocal} for a value that belongs to one
 * task and is not inherited (the resources it owns, a per-task counter).
 *
 * @example
 * ```ts
 * const requestId = B.createContext("requestId", 0);
 * yield* requestId.with(7, function* () {
 *   const child = B.spawn(function* () { return requestId.get(); });
 *   return yield* B.awaitExn(child);        // 7
 * });
 * requestId.get();                          // 0 again
 * ```
 */
export class Context<T> {
  /** @internal Whether its values go along with a call to another domain. */
  readonly crossesDomains: boolean;

  /** @internal Use {@link createContext}. */
  constructor(
    /** What identifies the context in every domain (given to `createContext`). */
    readonly name: string,
    /** The value `get` returns where none was given. */
    readonly defaultValue: T,
    options: ContextOptions,
  ) {
    this.crossesDomains = options.crossesDomains !== false;
  }

  /**
   * The value the current task sees: the nearest given to it or to the task
   * that spawned it (and so on up), or the default.
   * @example
   * ```ts
   * const id = requestId.get();
   * ```
   * @throws TypeError outside a task.
   */
  get(): T {
    const name = this.name;
    for (let frame = contextOf(currentTask(`${name}.get()`)); frame !== null; frame = frame.outer) {
      if (frame.name === name) return frame.value as T;
    }
    return this.defaultValue;
  }

  /**
   * Runs `body` in the current task with `value` given to the context: the
   * task and the tasks spawned beneath it while the body runs see it. When
   * the body returns or throws, the task sees the value it saw before (tasks
   * spawned meanwhile keep theirs).
   * @example
   * ```ts
   * const n = yield* requestId.with(7, function* () { return requestId.get(); });   // 7
   * ```
   * @throws TypeError outside a task, or when `body` is not a generator function.
   * @throws Uncloneable when the context crosses domains and `value` cannot be cloned.
   * @throws what `body` throws.
   */
  with<R>(value: T, body: () => Generator<Instruction, R, unknown>): Operation<R> {
    if (typeof body !== "function") {
      throw new TypeError(`${this.name}.with(value, body) expects a generator function as body, got ${describe(body)}`);
    }
    if (this.crossesDomains) checkCloneable(this.name, value);
    return withValue(this.name, value, this.crossesDomains, body);
  }
}

function* withValue<R>(name: string, value: unknown, crosses: boolean, body: () => Generator<Instruction, R, unknown>) {
  const task = currentTask(`${name}.with()`);
  const frame: ContextFrame = { name, value, crosses, outer: contextOf(task) };
  const outer = setContext(task, frame);
  try {
    return yield* body();
  } finally {
    setContext(task, outer);
  }
}

/**
 * @internal Throws `Uncloneable` when a value of a context that crosses
 * domains cannot clone: said where it is given, not at some later call.
 */
export function checkCloneable(name: string, value: unknown): void {
  const type = typeof value;
  if (value === null || (type !== "object" && type !== "function" && type !== "symbol")) return;
  try {
    const packed = encodePortables(value);
    structuredClone(packed === null ? value : packed.value);
  } catch (error) {
    throw new Uncloneable(
      `the value given to context ${name} (${describe(value)})`,
      `${String((error as Error).message ?? error)}; create the context with { crossesDomains: false } to keep its values on their domain`,
    );
  }
}

/**
 * Makes a {@link Context}: a value that follows the task tree, `defaultValue`
 * where none was given. `name` identifies the context in every domain (the
 * module defining it must be loaded there: the parallel task's module
 * imports it), so it is unique within a thread.
 *
 * @example
 * ```ts
 * const requestId = B.createContext("requestId", 0);
 * const logger = B.createContext("logger", console, { crossesDomains: false });
 * ```
 * @throws TypeError when `name` is not a non-empty string or is taken already, or for bad options.
 */
export function createContext<T>(name: string, defaultValue: T, options: ContextOptions = {}): Context<T> {
  if (typeof name !== "string" || name.length === 0) {
    throw new TypeError(`createContext(name, default) expects a non-empty string as name, got ${describe(name)}`);
  }
  if (names.has(name)) {
    throw new TypeError(
      `createContext("${name}"): a context of that name exists already; names identify contexts across domains, give another`,
    );
  }
  if (options === null || typeof options !== "object") {
    throw new TypeError(`createContext("${name}", default, options) expects an options object, got ${describe(options)}`);
  }
  const crosses = options.crossesDomains;
  if (crosses !== undefined && typeof crosses !== "boolean") {
    throw new TypeError(`createContext("${name}", default, { crossesDomains }) expects a boolean, got ${describe(crosses)}`);
  }
  names.add(name);
  return new Context(name, defaultValue, options);
}

/**
 * @internal The values of the current task that go along with a call: the
 * nearest of each context that crosses, as `[name, value]` pairs; null when none.
 */
export function crossingValues(task: Task): [string, unknown][] | null {
  const nearest = contextOf(task);
  if (nearest === null) return null;
  let pairs: [string, unknown][] | null = null;
  const seen = new Set<string>();
  for (let frame: ContextFrame | null = nearest; frame !== null; frame = frame.outer) {
    if (seen.has(frame.name)) continue;
    seen.add(frame.name);
    if (frame.crosses) (pairs ??= []).push([frame.name, frame.value]);
  }
  return pairs;
}

/**
 * @internal Gives `task` the values a call brought from another domain
 * (`crossingValues` there), in place of those it had.
 * @throws TypeError when `pairs` is not a list of `[name, value]` pairs.
 */
export function receiveValues(task: Task, pairs: unknown): void {
  if (!Array.isArray(pairs)) throw new TypeError("a call's context values are a list of [name, value] pairs");
  let frame: ContextFrame | null = null;
  for (let i = pairs.length - 1; i >= 0; i--) {
    const pair: unknown = pairs[i];
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string") {
      throw new TypeError("a call's context values are a list of [name, value] pairs");
    }
    frame = { name: pair[0], value: pair[1], crosses: true, outer: frame };
  }
  setContext(task, frame);
}
