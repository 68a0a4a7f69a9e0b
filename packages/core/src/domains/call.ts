/**
 * `call` and `parallel`: tasks on other domains. This file checks what the
 * program asked for and chooses the domain; the run's domains start the call
 * (host.ts): on another thread (remote-call.ts), or simulated on this one
 * (simulated.ts). Either way the caller gets a task of its own standing for
 * the call, awaited or cancelled like any other.
 */
import type { Transferable } from "node:worker_threads";
import { awaitAll, type Results } from "../await.js";
import { crossingValues } from "../context.js";
import { describe } from "../describe.js";
import { NoDomainAvailable } from "../errors.js";
import { currentTask, runningTask } from "../kernel/current.js";
import { type Kernel, kernelOf } from "../kernel/kernel.js";
import type { Task } from "../kernel/task.js";
import type { Instruction, Operation } from "../operation.js";
import type { Result } from "../result.js";
import { checkSpawnOptions, SPAWN_OPTION_NAMES } from "../spawn.js";
import type { SpawnOptions } from "../spawn-options.js";
import type { CallRequest, Domains } from "./contract.js";
import { isParallelTask, type ParallelTask } from "./define-task.js";
import { domainsOf } from "./host.js";
import { encodePortables } from "./portable.js";

/**
 * Options of {@link call}, given first: `call({ pin: 2 }, task, ...args)`.
 *
 * @example
 * ```ts
 * B.call({ pin: 1, transfer: [buffer], name: "hash-block" }, hash, buffer);
 * ```
 */
export interface CallOptions extends SpawnOptions {
  /** Run on this domain (≥ 1, not the caller's); otherwise a random one. */
  readonly pin?: number | undefined;
  /** Transferables (ArrayBuffers, MessagePorts…) moved, not copied, to the other domain, as for `postMessage`. */
  readonly transfer?: readonly Transferable[] | undefined;
}

const PLAIN_FUNCTION =
  "call/parallel cannot send a function to another domain (functions do not cross threads): " +
  "define the task at the top level of a module with " +
  'export const task = B.defineTask(import.meta.url, "task", function* (…) { … }) and pass that';

/**
 * Runs a parallel task on another domain: a random worker other than the
 * caller's domain (from the run's random source), never dom0; or the `pin`ned
 * one. Returns a task of the caller, named after the parallel task (or
 * `name`), awaited or cancelled like any other; arguments and result are
 * structured-cloned, except portable values (see `definePortable`), which are
 * encoded and made again on the other side. Options come first when present.
 *
 * @example
 * ```ts
 * const t = B.call(fib, 30);
 * const u = B.call({ pin: 2 }, fib, 31);
 * const [a, b] = [yield* B.awaitExn(t), yield* B.awaitExn(u)];
 * ```
 * @throws TypeError when given a plain function (use `defineTask`), a task `defineTask` did not make, or bad options.
 * @throws NoDomainAvailable when the run has no worker domain other than the caller's.
 * @throws RangeError when `pin` is dom0, the caller's domain or not a domain of the run.
 * @throws Uncloneable when an argument cannot be sent to another domain.
 * @throws whatever a portable's `encode` throws for an argument (e.g. a
 * `TypeError` for a value that refuses to cross domains).
 */
export function call<A extends unknown[], T>(task: ParallelTask<A, T>, ...args: A): Task<T>;
export function call<A extends unknown[], T>(options: CallOptions, task: ParallelTask<A, T>, ...args: A): Task<T>;
export function call(first: unknown, ...rest: unknown[]): Task<unknown> {
  currentTask("call()");
  const k = kernelOf("call()");
  let options: CallOptions = {};
  let task = first;
  let args = rest;
  // Options never have a body: an object with one is a task, or an imitation of one that is refused below.
  if (!isParallelTask(first) && typeof first !== "function" && first !== null && typeof first === "object" && !("body" in first)) {
    options = checkCallOptions(first);
    task = rest[0];
    args = rest.slice(1);
  }
  if (typeof task === "function") throw new TypeError(PLAIN_FUNCTION);
  if (!isParallelTask(task))
    throw new TypeError(`call expects a task made by B.defineTask, optionally preceded by options; got ${describe(task)}`);
  const domains = domainsOf(k);
  const pinned = options.pin !== undefined;
  const domain = pinned ? checkPin(domains, k, options.pin!) : pickDomain(domains, k);
  return domains.start(domain, {
    task: task as ParallelTask<unknown[], unknown>,
    ...encodeArguments(args, crossingValues(runningTask()!)),
    pinned,
    transfer: options.transfer ?? [],
    spawn: { orphans: options.orphans, give: options.give, name: options.name ?? task.name },
  });
}

/**
 * Runs `task` once per input, spread round-robin over the worker domains other
 * than the caller's, and returns the results in input order (a failing element
 * is an error at its index only). Inputs and results cross as for {@link call}.
 *
 * @example
 * ```ts
 * const results = yield* B.parallel(fib, [28, 29, 30]);
 * const values = results.map((r) => (r.ok ? r.value : NaN));
 * ```
 * @throws TypeError when given a plain function (use `defineTask`), a task `defineTask` did not make, or inputs that are not an array.
 * @throws NoDomainAvailable when the run has no worker domain other than the caller's.
 * @throws Uncloneable when an input cannot be sent to another domain.
 * @throws whatever a portable's `encode` throws for an input (then nothing was sent).
 */
export function parallel<I, T>(task: ParallelTask<[I], T>, inputs: readonly I[]): Operation<Result<T>[]> {
  if (typeof task === "function") throw new TypeError(PLAIN_FUNCTION);
  if (!isParallelTask(task)) throw new TypeError(`parallel expects a task made by B.defineTask, got ${describe(task)}`);
  if (!Array.isArray(inputs)) throw new TypeError(`parallel(task, inputs) expects an array of inputs, got ${describe(inputs)}`);
  return parallelTasks<I, T>(task, inputs);
}

function* parallelTasks<I, T>(task: ParallelTask<[I], T>, inputs: readonly I[]): Generator<Instruction, Result<T>[], unknown> {
  currentTask("parallel()");
  const k = kernelOf("parallel()");
  const domains = domainsOf(k);
  const others = domains.others(runningTask()!);
  if (others.length === 0) throw noDomain(domains, k);
  // Encoded first: a portable refusing to cross fails parallel before anything was sent.
  const values = crossingValues(runningTask()!);
  const encoded = inputs.map((input) => encodeArguments([input], values));
  const tasks = encoded.map((sent, i) => {
    const request = {
      task: task as ParallelTask<unknown[], unknown>,
      ...sent,
      pinned: false,
      transfer: [],
      spawn: { name: task.name },
    };
    return domains.start(others[i % others.length]!, request) as Task<T>;
  });
  return (yield* awaitAll(tasks)) as Results<Task<T>[]>;
}

/**
 * A call's arguments as they are sent: the caller's context values (if any go
 * along) after them, portables taken out.
 */
function encodeArguments(
  args: unknown[],
  values: [string, unknown][] | null,
): { sent: unknown[]; slots: CallRequest["slots"]; contexts: boolean } {
  const all = values === null ? args : [...args, values];
  const packed = encodePortables(all);
  return { sent: packed === null ? all : (packed.value as unknown[]), slots: packed?.slots ?? null, contexts: values !== null };
}

const CALL_OPTION_NAMES: readonly string[] = [...SPAWN_OPTION_NAMES, "pin", "transfer"];

function checkCallOptions(options: object): CallOptions {
  const checked = checkSpawnOptions(options, "call", CALL_OPTION_NAMES) as CallOptions;
  if (checked.transfer !== undefined && !Array.isArray(checked.transfer)) {
    throw new TypeError(`call({ transfer }) expects an array of transferables, got ${describe(checked.transfer)}`);
  }
  return checked;
}

function pickDomain(domains: Domains, k: Kernel): number {
  const others = domains.others(runningTask()!);
  if (others.length === 0) throw noDomain(domains, k);
  return others.length === 1 ? others[0]! : others[k.random.below(others.length)]!;
}

function checkPin(domains: Domains, k: Kernel, pin: number): number {
  if (!Number.isInteger(pin) || pin < 0 || pin > k.workers) {
    throw new RangeError(
      `call({ pin }): this run's worker domains are 1..${k.workers} (dom0 never runs parallel tasks), got ${describe(pin)}`,
    );
  }
  if (pin === 0) throw new RangeError("call({ pin: 0 }): parallel tasks never run on dom0; use spawn to run on dom0");
  if (pin === domains.domainOf(runningTask()!)) {
    throw new RangeError(`call({ pin: ${pin} }): a parallel task never runs on its caller's domain; use spawn for that`);
  }
  return pin;
}

function noDomain(domains: Domains, k: Kernel): NoDomainAvailable {
  return new NoDomainAvailable(
    k.workers === 0
      ? "no domain is available for a parallel task: this run has 0 worker domains; run with { domains: n } (n ≥ 1)"
      : `no domain is available for a parallel task: domain ${domains.domainOf(runningTask()!)} is the only worker and a task never runs on its caller's domain nor on dom0`,
  );
}
