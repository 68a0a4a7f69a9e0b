/**
 * `spawn` (Miou's `async`, formerly `call_cc`): a child task on the current domain.
 */

import { describe, isAsyncFunction, isGeneratorObject } from "./describe.js";
import { inheritContext } from "./kernel/context.js";
import { currentTask } from "./kernel/current.js";
import { asGenerator } from "./kernel/fiber.js";
import { type Kernel, kernelOf, type SpawnMode } from "./kernel/kernel.js";
import { registerGenerator } from "./kernel/names.js";
import type { Task } from "./kernel/task.js";
import { familyOf } from "./kernel/tree.js";
import { givable, spawnHooks } from "./lifecycle.js";
import type { Instruction, Operation, TaskBody } from "./operation.js";
import { checkOptionNames } from "./option-names.js";
import { Orphans } from "./orphans.js";
import type { SpawnOptions } from "./spawn-options.js";

const GeneratorFunction = Object.getPrototypeOf(function* () {}).constructor as FunctionConstructor;
const NO_ARGS: readonly unknown[] = [];

/**
 * Spawns a child of the current task, running `fn(...args)` on this domain.
 * The child is queued, never run eagerly: the parent goes on until it
 * suspends. The parent must await or cancel the child before returning
 * (Miou's first rule); for background work pass an `orphans` collector.
 * Options come first when present; `name` names the task in errors and
 * diagnostics (by default, `fn`'s name).
 *
 * @example
 * ```ts
 * const child = B.spawn(function* (a: number, b: number) { return a + b; }, 20, 22);
 * console.log("runs before the child");
 * const n = yield* B.awaitExn(child);               // 42
 * const bg = B.orphans<void>();
 * B.spawn({ orphans: bg, name: "echo" }, echo, client);
 * ```
 * @throws TypeError outside a task, when `fn` is not a task body (`B.TaskBody`), for
 * options that are not `{ orphans?, give?, name? }`, or when the orphans
 * collector belongs to another task.
 */
export function spawn<A extends unknown[], T>(fn: TaskBody<A, T>, ...args: A): Task<T>;
export function spawn<A extends unknown[], T>(options: SpawnOptions, fn: TaskBody<A, T>, ...args: A): Task<T>;
export function spawn(first: unknown, second?: unknown): Task<unknown> {
  const parent = currentTask("spawn()");
  const k = kernelOf("spawn()");
  // biome-ignore lint/complexity/noArguments: a rest parameter would be an array made at every spawn, kept only to read one argument
  const argc = arguments.length - 1;
  if (typeof first === "function") {
    if (argc <= 1) return spawnChild(k, parent, undefined, first, argc, second, "spawn");
    // biome-ignore lint/complexity/noArguments: the array of several arguments is made only here
    return spawnChild(k, parent, undefined, first, argc, Array.prototype.slice.call(arguments, 1), "spawn");
  }
  const options = checkSpawnOptions(first, "spawn");
  // biome-ignore lint/complexity/noArguments: as above (a server spawning one task per connection passes one argument)
  if (argc === 1 || argc === 2) return spawnChild(k, parent, options, second, argc - 1, arguments[2], "spawn");
  // biome-ignore lint/complexity/noArguments: as above
  const args: unknown[] = Array.prototype.slice.call(arguments, 2);
  return spawnChild(k, parent, options, second, args.length, args, "spawn");
}

/** @internal How a task record holds its body's arguments: `argc` of them in `value` (the one itself, or an array of several). */
export function argsValue(args: readonly unknown[]): unknown {
  return args.length === 1 ? args[0] : args;
}

/**
 * @internal `spawn` once its arguments are sorted out: a child of `parent`
 * (the current task), in `mode` (a parallel task's proxy runs to its first
 * suspension even when cancelled unborn).
 */
export function spawnChild(
  k: Kernel,
  parent: Task,
  options: SpawnOptions | undefined,
  fn: unknown,
  argc: number,
  args: unknown,
  caller: string,
  mode?: SpawnMode,
): Task {
  const child = makeChild(k, parent, parent, options, fn, argc, args, caller, mode);
  options?.orphans?.adopt(child);
  k.adopt(parent, child);
  return child;
}

/**
 * @internal Makes a child of `parent` running `fn` on `argc` arguments
 * (`args`: see `argsValue`), named and seen by the spawn hooks, but not yet
 * in the tree (`k.adopt` puts it there).
 * `spawner` is the task that asked for it: `parent`, or another task of the
 * parent's group.
 * @throws TypeError when `fn` is not a task body (`B.TaskBody`), or the orphans
 * collector belongs to another task; what a spawn hook throws.
 */
export function makeChild(
  k: Kernel,
  parent: Task,
  spawner: Task,
  options: SpawnOptions | undefined,
  fn: unknown,
  argc: number,
  args: unknown,
  caller: string,
  mode?: SpawnMode,
): Task {
  // A generator function's generator is made at the child's first step (see kernel/task.ts).
  const child = isGeneratorFunction(fn)
    ? k.create(parent, fn as Task["gen"], argc, args, mode)
    : k.create(parent, startFiber(fn, argc === 0 ? NO_ARGS : argc === 1 ? [args] : (args as unknown[]), caller), 0, undefined, mode);
  if (options !== undefined) {
    if (options.name !== undefined) familyOf(child).name = options.name;
    // Checks that can fail come before the hooks, which may move resources to the child.
    options.orphans?.claim(parent, "spawn into");
  }
  inheritContext(spawner, child);
  if (spawnHooks.length !== 0) for (const hook of spawnHooks) hook(child, parent, options, spawner);
  return child;
}

/** @internal Whether `fn` is a generator function: its task's generator is made at its first step, and nothing of it runs before. */
export function isGeneratorFunction(fn: unknown): boolean {
  return fn instanceof GeneratorFunction;
}

/**
 * @internal Calls a task body that is not a generator function; it must
 * return an operation (`B.TaskBody`): a generator, or anything `yield*` takes.
 * @throws TypeError when it is not a function or does not return an operation.
 */
export function startFiber(fn: unknown, args: readonly unknown[], caller: string): Generator<Instruction, unknown, unknown> {
  if (typeof fn !== "function") {
    throw new TypeError(`${caller} expects a generator function (function* () { … }), got ${describe(fn)}`);
  }
  checkNotAsync(fn, caller);
  const op = args.length === 0 ? fn() : fn(...args);
  if (!isOperation(op)) {
    throw new TypeError(
      `${caller} expects a generator function, or a function that returns an operation: ${fn.name || "the function"} returned ${describe(op)}; ` +
        "write it as function* () { … } and use yield* for operations",
    );
  }
  if (isGeneratorObject(op)) registerGenerator(op as object, fn.name || "anonymous");
  return asGenerator(op as Generator<Instruction, unknown, unknown>);
}

/** Whether a body's result is an operation: an object that `yield*` takes (an async generator is not: it has no `Symbol.iterator`). */
function isOperation(value: unknown): boolean {
  return value !== null && typeof value === "object" && typeof (value as Operation<unknown>)[Symbol.iterator] === "function";
}

/**
 * @internal Refuses an `async` function or `async function*` where a task's
 * body belongs: its `await`s would run outside the scheduler.
 * @throws TypeError naming the rule.
 */
export function checkNotAsync(fn: unknown, caller: string): void {
  if (!isAsyncFunction(fn)) return;
  throw new TypeError(
    `${caller} expects a generator function (function* () { … }), got ${describe(fn)}: a task's body is a plain generator ` +
      "function whose operations run with yield*, never an async one; wait for a Promise in it with yield* B.promise(() => promise)",
  );
}

/** @internal The options of `spawn` (and of `g.spawn`, which refuses `orphans` by name). */
export const SPAWN_OPTION_NAMES: readonly string[] = ["orphans", "give", "name"];

/**
 * @internal Checks `spawn`'s (or `call`'s) options object: its keys among `names`.
 * @throws TypeError naming the bad option.
 */
export function checkSpawnOptions(options: unknown, caller: string, names: readonly string[] = SPAWN_OPTION_NAMES): SpawnOptions {
  if (options === null || typeof options !== "object" || Array.isArray(options) || isGeneratorObject(options)) {
    throw new TypeError(`${caller} expects a generator function, or options then a generator function; got ${describe(options)}`);
  }
  // A misspelt option would otherwise spawn a plain child (`{ orphan: bg }`), which fails later as StillHasChildren.
  for (const key in options) if (!names.includes(key)) checkOptionNames(`${caller}(options, …)`, options, names);
  const { orphans, give, name } = options as SpawnOptions;
  if (orphans !== undefined && !(orphans instanceof Orphans)) {
    throw new TypeError(`${caller}({ orphans }) expects a collector made by B.orphans(), got ${describe(orphans)}`);
  }
  if (give !== undefined) checkGive(give, caller);
  if (name !== undefined && (typeof name !== "string" || name.length === 0)) {
    throw new TypeError(`${caller}({ name }) expects a non-empty string, got ${describe(name)}`);
  }
  return options as SpawnOptions;
}

/**
 * Every element of `give` must be a value made to move between tasks
 * ({@link givable}); the package that made it moves it (sync's spawn hook
 * also checks that the spawner owns it).
 */
function checkGive(give: unknown, caller: string): void {
  if (!Array.isArray(give)) throw new TypeError(`${caller}({ give }) expects an array of resources, got ${describe(give)}`);
  for (let i = 0; i < give.length; i++) {
    const r: unknown = give[i];
    if (r !== null && typeof r === "object" && (r as { [givable]?: unknown })[givable] === true) continue;
    throw new TypeError(
      `${caller}({ give }) takes resources to move to the child (made by @bobbin/sync's Ownership.create, or marked with givable of @bobbin/core/lowlevel), ` +
        `got ${describe(r)} at index ${i}: pass other values as arguments`,
    );
  }
}
