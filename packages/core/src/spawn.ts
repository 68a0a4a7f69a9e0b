/**
 * `spawn` (Miou's `async`, formerly `call_cc`): a child task on the current domain.
 */
import { type SpawnOptions, spawnHooks } from "./lifecycle.js";
import type { Instruction, TaskBody } from "./operation.js";
import { Orphans } from "./orphans.js";
import { currentTask } from "./scheduler.js";
import { F, linkChild, Task } from "./task.js";

const GeneratorFunction = Object.getPrototypeOf(function* () {}).constructor as FunctionConstructor;

/**
 * Spawns a child of the current task, running `fn(...args)` on this domain.
 * The child is queued, never run eagerly: the parent goes on until it
 * suspends. The parent must await or cancel the child before returning
 * (Miou's first rule); for background work pass an `orphans` collector.
 * Options come first when present.
 *
 * @example
 * ```ts
 * const child = B.spawn(function* (a: number, b: number) { return a + b; }, 20, 22);
 * console.log("runs before the child");
 * const n = yield* B.awaitExn(child);               // 42
 * const bg = B.orphans<void>();
 * B.spawn({ orphans: bg }, echo, client);
 * ```
 * @throws TypeError outside a task, when `fn` is not a generator function, or
 * when the orphans collector belongs to another task.
 */
export function spawn<A extends unknown[], T>(fn: TaskBody<A, T>, ...args: A): Task<T>;
export function spawn<A extends unknown[], T>(options: SpawnOptions, fn: TaskBody<A, T>, ...args: A): Task<T>;
export function spawn(first: unknown, ...rest: unknown[]): Task<unknown> {
  const parent = currentTask("spawn()");
  let options: SpawnOptions | undefined;
  let fn: unknown = first;
  let args = rest;
  if (typeof first !== "function") {
    options = checkOptions(first);
    fn = rest[0];
    args = rest.slice(1);
  }
  let child: Task;
  if (fn instanceof GeneratorFunction) {
    // The generator is made at the child's first step (see Task).
    child = new Task(parent.sched, parent, null);
    child.resume = fn;
    if (args.length === 1) {
      child.outcome = args[0];
      child.flags = F.ONE_ARG;
    } else if (args.length !== 0) {
      child.outcome = args;
      child.flags = F.ARGS;
    }
  } else {
    child = new Task(parent.sched, parent, startFiber(fn, args, "spawn"));
  }
  // Checks that can fail come before the hooks, which may move resources to the child.
  options?.orphans?.claim(parent, "spawn into");
  if (spawnHooks.length !== 0) for (const hook of spawnHooks) hook(child, parent, options);
  options?.orphans?.adopt(child);
  linkChild(parent, child);
  parent.sched.liveTasks++;
  parent.sched.enqueue(child);
  return child;
}

/** @internal Calls a task body, which must be a generator function. */
export function startFiber(fn: unknown, args: readonly unknown[], caller: string): Generator<Instruction, unknown, unknown> {
  if (typeof fn !== "function") {
    throw new TypeError(`${caller} expects a generator function (function* () { … }), got ${describe(fn)}`);
  }
  const gen = args.length === 0 ? fn() : fn(...args);
  if (gen === null || typeof gen !== "object" || typeof gen.next !== "function" || typeof gen.throw !== "function") {
    throw new TypeError(
      `${caller} expects a generator function: ${fn.name || "the function"} returned ${describe(gen)}; ` +
        "write it as function* () { … } and use yield* for operations",
    );
  }
  return gen as Generator<Instruction, unknown, unknown>;
}

function checkOptions(options: unknown): SpawnOptions {
  if (options === null || typeof options !== "object") {
    throw new TypeError(`spawn expects a generator function, or options then a generator function; got ${describe(options)}`);
  }
  const { orphans, give } = options as SpawnOptions;
  if (orphans !== undefined && !(orphans instanceof Orphans)) {
    throw new TypeError("spawn({ orphans }) expects a collector made by B.orphans()");
  }
  if (give !== undefined && !Array.isArray(give)) throw new TypeError("spawn({ give }) expects an array of resources");
  return options as SpawnOptions;
}

/** @internal */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "function") return `function ${value.name || "(anonymous)"}`;
  if (typeof value === "object") return (value as object).constructor?.name ?? "an object";
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
