/**
 * Telling a task that keeps its domain: a step (from a resumption to the
 * next suspension, yield or end) that runs longer than the run's
 * `blockingMs` is reported on the `bobbin:task:blocked` diagnostics channel
 * every time, and as a process warning (`BOBBIN_BLOCKING`) the first time
 * for each task. JavaScript cannot look at a thread while it runs, so the
 * report comes when the step ends: a task that never yields is never
 * reported, and neither is anything else of its domain.
 */
import { channel } from "node:diagnostics_channel";
import { describeWaiter } from "./guards.js";
import { waiterOf } from "./state.js";
import { F, type Task, type Waiter } from "./task.js";

/** @internal The channel of blocked-task reports (listed in diagnostics/channels.ts). */
export const BLOCKED_CHANNEL = "bobbin:task:blocked";

const blockedChannel = channel(BLOCKED_CHANNEL);

/** @internal What the blocked channel publishes. */
export interface BlockedMessage {
  readonly task: Task;
  readonly domain: number;
  /** How long the step ran, in ms. */
  readonly ms: number;
  readonly thresholdMs: number;
  /** Where the step began, in words: its first step, after a yield, or what it had waited on. */
  readonly resumedFrom: string;
}

/** @internal */
export class BlockingWatch {
  /** What each task last parked on: where its next step resumes from. */
  private readonly waits = new WeakMap<Task, Waiter>();
  private readonly warned = new WeakSet<Task>();

  constructor(
    readonly thresholdMs: number,
    private readonly domainOf: (task: Task) => number,
  ) {}

  /** A step of `task` ran `ms`; `flags` were its flags before the step. */
  stepped(task: Task, flags: number, ms: number): void {
    if (ms > this.thresholdMs) this.report(task, ms, this.resumedFrom(task, flags));
    const waiter = waiterOf(task);
    if (waiter !== null) this.waits.set(task, waiter);
  }

  private resumedFrom(task: Task, flags: number): string {
    if ((flags & F.STARTED) === 0) return "its first step";
    if ((flags & F.YIELDED) !== 0) return "a yield";
    const waiter = this.waits.get(task);
    return waiter === undefined ? "a wait" : `waiting on ${describeWaiter(waiter)}`;
  }

  private report(task: Task, ms: number, resumedFrom: string): void {
    const domain = this.domainOf(task);
    if (blockedChannel.hasSubscribers) {
      const message: BlockedMessage = { task, domain, ms, thresholdMs: this.thresholdMs, resumedFrom };
      blockedChannel.publish(message);
    }
    if (this.warned.has(task)) return;
    this.warned.add(task);
    process.emitWarning(
      `${task} ran ${ms.toFixed(1)} ms on domain ${domain} without yielding (more than run's blockingMs, ${this.thresholdMs} ms), ` +
        `from ${resumedFrom}; every other task of the domain waited meanwhile. ` +
        "Give CPU loops `yield* B.yieldIfDue()`, or run the work on another domain (B.call)",
      { code: "BOBBIN_BLOCKING" },
    );
  }
}
