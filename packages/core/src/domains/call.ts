/**
 * `call` and `parallel`: tasks on other domains (worker threads).
 *
 * A parallel task is represented in its caller's domain by a proxy task, an
 * ordinary child of the caller named after the parallel task: awaiting,
 * cancelling, orphans and every rule of the tree apply to it unchanged. The
 * proxy sends the call, parks until the result comes back, and when cancelled
 * tells the other domain and waits until the remote subtree has ended (or
 * the domain is terminated for not ending it within the grace period).
 */
import type { TransferListItem } from "node:worker_threads";
import { awaitAll, type Results } from "../await.js";
import { describe } from "../describe.js";
import { publishCallEnd, publishCallStart } from "../diagnostics/channels.js";
import { Cancelled, NoDomainAvailable } from "../errors.js";
import { current, currentKernel, currentTask, kernelOf } from "../kernel/current.js";
import type { Kernel } from "../kernel/kernel.js";
import { F, type Task, type Waiter } from "../kernel/task.js";
import type { SpawnOptions } from "../lifecycle.js";
import { type Instruction, type Operation, SingleShot, SUSPENDED } from "../operation.js";
import { promise } from "../promise.js";
import type { Result } from "../result.js";
import { checkSpawnOptions, spawn } from "../spawn.js";
import { isParallelTask, type ParallelTask } from "./define-task.js";
import { domainLink } from "./host.js";
import type { DomainLink } from "./link.js";
import { decodePortables, encodePortables, importModules, portableModules } from "./portable.js";
import { decodeError, errorModules } from "./wire.js";

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
  readonly pin?: number;
  /** Transferables (ArrayBuffers, MessagePorts…) moved, not copied, to the other domain, as for `postMessage`. */
  readonly transfer?: readonly TransferListItem[];
}

type CallResult = NonNullable<ReturnType<DomainLink["takeResult"]>>;

/** Parks a proxy until its call's result is back. */
class AwaitResult extends SingleShot<CallResult> implements Waiter {
  constructor(
    private readonly link: DomainLink,
    private readonly id: number,
  ) {
    super();
  }

  next(): IteratorResult<Instruction, CallResult> {
    const task = current!;
    const result = this.link.takeResult(this.id, task);
    if (result !== null) return { done: true, value: result };
    currentKernel!.park(task, this);
    return SUSPENDED;
  }

  detach(): void {
    this.link.forgetWaiter(this.id);
  }

  describe(): string {
    return `call → domain ${this.link.domainOf(this.id)}`;
  }
}

function awaitResult(link: DomainLink, id: number): Operation<CallResult> {
  return new AwaitResult(link, id);
}

/** The body of a proxy: waits for call `id` (sent to `domain`) and passes on its cancellation. */
function* remoteCall(link: DomainLink, id: number, domain: number): Generator<Instruction, unknown, unknown> {
  let result: CallResult;
  try {
    result = yield* awaitResult(link, id);
  } catch (error) {
    if (error instanceof Cancelled) {
      link.cancelCall(id, current!, link.kernel.setup.cancelGraceMs);
      yield* awaitResult(link, id); // the remote subtree has ended
    }
    throw error;
  }
  if (result.ok && !result.portable) {
    publishCallEnd(current!, domain, true, undefined);
    return result.value;
  }
  // What it carries may need modules this domain has not loaded (see `definePortable`, `defineError`).
  const modules = result.ok ? portableModules(result.value) : errorModules(result.error);
  if (modules.length !== 0) yield* promise(() => importModules(modules));
  if (result.ok) {
    publishCallEnd(current!, domain, true, undefined);
    return decodePortables(result.value);
  }
  const error = decodeError(result.error);
  publishCallEnd(current!, domain, false, error);
  throw error;
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
 * @throws TypeError when given a plain function (use `defineTask`) or bad options.
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
  if (!isParallelTask(first) && typeof first !== "function" && first !== null && typeof first === "object") {
    options = checkCallOptions(first);
    task = rest[0];
    args = rest.slice(1);
  }
  if (typeof task === "function") throw new TypeError(PLAIN_FUNCTION);
  if (!isParallelTask(task))
    throw new TypeError(`call expects a task made by B.defineTask, optionally preceded by options; got ${describe(task)}`);
  const link = domainLink(k);
  const pinned = options.pin !== undefined;
  const domain = pinned ? checkPin(link, options.pin!) : pickDomain(link, k);
  const sent = encodePortables(args) as unknown[];
  const id = link.sendCall(domain, task.url, task.name, sent, pinned, options.transfer ?? [], sent !== args);
  return spawnProxy(link, id, domain, task.name, { orphans: options.orphans, give: options.give, name: options.name ?? task.name });
}

/** The caller's task standing for call `id` of task `name`; the call was sent already, so it must hear of a cancellation. */
function spawnProxy(link: DomainLink, id: number, domain: number, name: string, options: SpawnOptions): Task<unknown> {
  let proxy: Task<unknown>;
  try {
    proxy = spawn(options, remoteCall, link, id, domain);
  } catch (error) {
    link.cancelCall(id, current!, link.kernel.setup.cancelGraceMs);
    throw error;
  }
  proxy.flags |= F.NO_EARLY_CANCEL;
  publishCallStart(proxy, name, link.kernel.domain, domain);
  return proxy;
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
 * @throws TypeError when given a plain function (use `defineTask`) or inputs that are not an array.
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
  const link = domainLink(kernelOf("parallel()"));
  const others = link.others;
  if (others.length === 0) throw noDomain(link);
  // Encoded first: a portable refusing to cross fails parallel before anything was sent.
  const encoded = inputs.map((input) => {
    const args = [input];
    const sent = encodePortables(args) as unknown[];
    return { sent, portable: sent !== args };
  });
  const tasks = encoded.map(({ sent, portable }, i) => {
    const domain = others[i % others.length]!;
    const id = link.sendCall(domain, task.url, task.name, sent, false, [], portable);
    return spawnProxy(link, id, domain, task.name, { name: task.name }) as Task<T>;
  });
  return (yield* awaitAll(tasks)) as Results<Task<T>[]>;
}

function checkCallOptions(options: object): CallOptions {
  const checked = checkSpawnOptions(options, "call") as CallOptions;
  if (checked.transfer !== undefined && !Array.isArray(checked.transfer)) {
    throw new TypeError(`call({ transfer }) expects an array of transferables, got ${describe(checked.transfer)}`);
  }
  return checked;
}

function pickDomain(link: DomainLink, k: Kernel): number {
  const others = link.others;
  if (others.length === 0) throw noDomain(link);
  return others.length === 1 ? others[0]! : others[k.random.below(others.length)]!;
}

function checkPin(link: DomainLink, pin: number): number {
  if (!Number.isInteger(pin) || pin < 0 || pin > link.workers) {
    throw new RangeError(
      `call({ pin: ${String(pin)} }): this run's worker domains are 1..${link.workers} (dom0 never runs parallel tasks)`,
    );
  }
  if (pin === 0) throw new RangeError("call({ pin: 0 }): parallel tasks never run on dom0; use spawn to run on dom0");
  if (pin === link.kernel.domain) {
    throw new RangeError(`call({ pin: ${pin} }): a parallel task never runs on its caller's domain; use spawn for that`);
  }
  return pin;
}

function noDomain(link: DomainLink): NoDomainAvailable {
  return new NoDomainAvailable(
    link.workers === 0
      ? "no domain is available for a parallel task: this run has 0 worker domains; run with { domains: n } (n ≥ 1)"
      : `no domain is available for a parallel task: domain ${link.kernel.domain} is the only worker and a task never runs on its caller's domain nor on dom0`,
  );
}
