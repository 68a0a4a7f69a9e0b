/**
 * A call to a domain on another thread. The parallel task is represented in
 * its caller's domain by a proxy task, an ordinary child of the caller named
 * after the parallel task: awaiting, cancelling, orphans and every rule of the
 * tree apply to it unchanged. The proxy sends the call, parks until the result
 * comes back, and when cancelled tells the other domain and waits until the
 * remote subtree has ended (or the domain is terminated for not ending it
 * within the grace period).
 */
import { publishCallEnd, publishCallStart } from "../diagnostics/channels.js";
import { Cancelled } from "../errors.js";
import { waitsAfterCancel } from "../kernel/cancellation.js";
import { runningTask } from "../kernel/current.js";
import { runningKernel, type SpawnMode } from "../kernel/kernel.js";
import type { Task, Waiter } from "../kernel/task.js";
import { type Instruction, type Operation, SingleShot, SUSPENDED } from "../operation.js";
import { promise } from "../promise.js";
import { spawnChild } from "../spawn.js";
import type { CallRequest } from "./contract.js";
import type { DomainLink } from "./link.js";
import { decodePortables, importModules, portableModules } from "./portable.js";
import { decodeError, errorModules } from "./wire.js";

type CallResult = NonNullable<ReturnType<DomainLink["takeResult"]>>;

/** A proxy runs to its first suspension even when cancelled unborn: it must tell the other domain. */
const PROXY: SpawnMode = { runsToFirstSuspension: true };

/** Parks a proxy until its call's result is back. */
class AwaitResult extends SingleShot<CallResult> implements Waiter {
  constructor(
    private readonly link: DomainLink,
    private readonly id: number,
  ) {
    super();
  }

  next(): IteratorResult<Instruction, CallResult> {
    const task = runningTask()!;
    const result = this.link.takeResult(this.id, task);
    if (result !== null) return { done: true, value: result };
    runningKernel()!.park(task, this);
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
    if (!(error instanceof Cancelled)) throw error;
    waitsAfterCancel(runningTask()!);
    link.cancelCall(id, runningTask()!, link.kernel.config.cancelGraceMs);
    // Once the remote subtree has ended: a cleanup that failed there is this task's outcome.
    result = yield* awaitResult(link, id);
    if (result.ok || decodeError(result.error) instanceof Cancelled) throw error;
  }
  if (result.ok && result.slots === null) {
    publishCallEnd(runningTask()!, domain, true, undefined);
    return result.value;
  }
  // What it carries may need modules this domain has not loaded (see `definePortable`, `defineError`).
  const modules = result.ok ? portableModules(result.slots) : errorModules(result.error);
  if (modules.length !== 0) yield* promise(() => importModules(modules));
  if (result.ok) {
    publishCallEnd(runningTask()!, domain, true, undefined);
    return decodePortables(result.value, result.slots);
  }
  const error = decodeError(result.error);
  publishCallEnd(runningTask()!, domain, false, error);
  throw error;
}

/**
 * @internal Sends `request` to `domain` through `link` and returns its proxy.
 * @throws Uncloneable when an argument cannot be posted (nothing was sent).
 */
export function startRemoteCall(link: DomainLink, domain: number, request: CallRequest): Task<unknown> {
  const { task, sent, pinned, contexts, transfer, slots } = request;
  const id = link.sendCall(domain, task.url, task.name, sent, pinned, contexts, transfer, slots);
  let proxy: Task<unknown>;
  try {
    proxy = spawnChild(link.kernel, runningTask()!, request.spawn, remoteCall, 3, [link, id, domain], "call", PROXY);
  } catch (error) {
    // The call was sent already: its domain must hear that nobody waits for it.
    link.cancelCall(id, runningTask()!, link.kernel.config.cancelGraceMs);
    throw error;
  }
  publishCallStart(proxy, task.name, link.kernel.domain, domain);
  return proxy;
}
