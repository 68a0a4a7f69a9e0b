/**
 * Worker domains simulated on dom0's thread (`run({ simulateDomains: true })`;
 * `@bobbin/sim` runs every world this way). A parallel task runs as the
 * caller's child in dom0's kernel, so the run's scheduling policy and random
 * source decide everything about it, and a run replays from its seed. What
 * crosses a domain still crosses by structured cloning, as between threads:
 * arguments, results and errors are copies, portables are encoded and made
 * again, and a value that cannot cross fails as it would. `Domain.self()`
 * inside the task and its subtree says which domain it was placed on, and a
 * call from there never lands on that domain.
 *
 * What threads do and this does not: no parallelism (the domains take turns
 * on one thread, so CPU-bound work costs the sum, not the maximum), no work
 * sharing (placement alone spreads calls), and a call cancelled before its
 * task started never starts (threads may already have begun it). A parallel
 * task stuck in a synchronous loop blocks the whole run, as any task would.
 */

import { receiveValues } from "../context.js";
import { publishCallEnd, publishCallStart } from "../diagnostics/channels.js";
import { Cancelled } from "../errors.js";
import { runningTask } from "../kernel/current.js";
import type { Kernel } from "../kernel/kernel.js";
import type { Task } from "../kernel/task.js";
import type { Instruction } from "../operation.js";
import { spawn } from "../spawn.js";
import type { CallRequest, Domains } from "./contract.js";
import type { ParallelTask } from "./define-task.js";
import { decodePortables, encodePortables } from "./portable.js";
import { decodeError, encodeError, uncloneableArguments, uncloneableResult } from "./wire.js";

/** @internal */
export class SimulatedDomains implements Domains {
  readonly link = null;
  /** The tasks that stand for calls, and the domain each was placed on; their subtrees run there. */
  private readonly placed = new WeakMap<Task, number>();

  constructor(private readonly kernel: Kernel) {}

  domainOf(task: Task): number {
    for (let t: Task | null = task; t !== null; t = t.parent) {
      const domain = this.placed.get(t);
      if (domain !== undefined) return domain;
    }
    return this.kernel.domain;
  }

  others(task: Task): readonly number[] {
    const self = this.domainOf(task);
    const others: number[] = [];
    for (let d = 1; d <= this.kernel.workers; d++) if (d !== self) others.push(d);
    return others;
  }

  start(domain: number, request: CallRequest): Task<unknown> {
    const { task, sent, slots, transfer } = request;
    let copy: [unknown[], unknown];
    try {
      // One clone, as one message: the slots' containers are the copy's.
      copy = structuredClone([sent, slots], { transfer: [...transfer] });
    } catch (error) {
      throw uncloneableArguments(task.name, sent, error);
    }
    const from = this.domainOf(runningTask()!);
    const proxy = spawn(request.spawn, simulatedCall, task, copy[0], copy[1], domain, request.contexts);
    this.placed.set(proxy, domain);
    publishCallStart(proxy, task.name, from, domain);
    return proxy;
  }

  idle(): boolean {
    return false;
  }

  fatal(): boolean {
    return false;
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The body of a call's task: the parallel task's body on copies, whose result and error cross back as copies. */
function* simulatedCall(
  task: ParallelTask<unknown[], unknown>,
  args: unknown[],
  slots: unknown,
  domain: number,
  contexts: boolean,
): Generator<Instruction, unknown, unknown> {
  const decoded = slots === null ? args : (decodePortables(args, slots) as unknown[]);
  // The copies of the caller's values replace those the task inherited as the caller's child.
  if (contexts) receiveValues(runningTask()!, decoded.pop());
  let value: unknown;
  try {
    value = yield* task.body(...decoded);
  } catch (error) {
    // The task's own cancellation stays what the kernel made; any other error crosses back as a copy.
    if (error instanceof Cancelled) throw error;
    const copy = decodeError(encodeError(error));
    publishCallEnd(runningTask()!, domain, false, copy);
    throw copy;
  }
  const packed = encodePortables(value);
  let copy: unknown;
  try {
    copy = structuredClone(packed === null ? value : [packed.value, packed.slots]);
  } catch (error) {
    const failure = uncloneableResult(error);
    publishCallEnd(runningTask()!, domain, false, failure);
    throw failure;
  }
  publishCallEnd(runningTask()!, domain, true, undefined);
  if (packed === null) return copy;
  const [copied, copiedSlots] = copy as [unknown, unknown];
  return decodePortables(copied, copiedSlots);
}
