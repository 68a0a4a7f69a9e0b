/**
 * Diagnostics channels (`node:diagnostics_channel`): the life of every task
 * and the calls that cross domains, for tracing tools (OpenTelemetry, say).
 * Nothing is published, and nothing costs anything, while nobody subscribes:
 * the kernel checks `hasSubscribers` when a slice of its loop begins (see
 * tracing.ts) and keeps no tracer otherwise. Channels are per thread: a
 * subscriber hears the tasks of the domain its thread runs.
 */
import { channel } from "node:diagnostics_channel";
import { BLOCKED_CHANNEL } from "../kernel/blocking.js";
import { Kernel } from "../kernel/kernel.js";
import { outcomeOf } from "../kernel/state.js";
import type { Task } from "../kernel/task.js";
import type { Tracer } from "../kernel/trace.js";

/**
 * The names of Bobbin's diagnostics channels, and what each publishes:
 *
 * - `task.spawn` (`"bobbin:task:spawn"`): `{ task, parent, domain }`, a task was spawned (queued);
 * - `task.start` (`"bobbin:task:start"`): `{ task, domain }`, its body runs for the first time;
 * - `task.wake` (`"bobbin:task:wake"`): `{ task, domain }`, it was woken (it is ready to run again);
 * - `task.cancel` (`"bobbin:task:cancel"`): `{ task, domain }`, its cancellation was asked for;
 * - `task.end` (`"bobbin:task:end"`): `{ task, domain, status, error }`, it and its subtree
 *   have ended (`status`: `"resolved"`, `"failed"`, `"cancelled"`; `error` when not resolved);
 * - `task.blocked` (`"bobbin:task:blocked"`): `{ task, domain, ms, thresholdMs, resumedFrom }`, a
 *   step of the task ran `ms` without yielding, more than the run's `blockingMs` (`resumedFrom`
 *   says where the step began: "its first step", "a yield", "waiting on …");
 * - `call.start` (`"bobbin:call:start"`): `{ task, name, from, domain }`, the task `task` (a
 *   proxy) stands for the parallel task `name` sent from domain `from` to domain `domain`;
 * - `call.end` (`"bobbin:call:end"`): `{ task, domain, ok, error }`, its result came back.
 *
 * `task` is the `Task` itself (`name`, `uid`, `parent`, `status`), valid only
 * in the subscriber's own thread.
 *
 * @example
 * ```ts
 * import { subscribe } from "node:diagnostics_channel";
 * subscribe(B.channels.task.end, ({ task, status }) => console.log(`${task} ${status}`));
 * ```
 * @throws never: a subscriber that throws is reported by `node:diagnostics_channel` (as an uncaught exception), not to the task.
 */
export const channels = {
  task: {
    spawn: "bobbin:task:spawn",
    start: "bobbin:task:start",
    wake: "bobbin:task:wake",
    cancel: "bobbin:task:cancel",
    end: "bobbin:task:end",
    blocked: BLOCKED_CHANNEL,
  },
  call: {
    start: "bobbin:call:start",
    end: "bobbin:call:end",
  },
} as const;

const spawnChannel = channel(channels.task.spawn);
const startChannel = channel(channels.task.start);
const wakeChannel = channel(channels.task.wake);
const cancelChannel = channel(channels.task.cancel);
const endChannel = channel(channels.task.end);
const callStartChannel = channel(channels.call.start);
const callEndChannel = channel(channels.call.end);

/** @internal Whether anyone listens to the task channels (asked once per slice). */
export function taskChannelsActive(): boolean {
  return (
    spawnChannel.hasSubscribers ||
    startChannel.hasSubscribers ||
    wakeChannel.hasSubscribers ||
    cancelChannel.hasSubscribers ||
    endChannel.hasSubscribers
  );
}

/**
 * @internal The tracer that publishes on the task channels of a domain:
 * each message names the task's own domain, which differs from the
 * kernel's for a domain simulated on its thread (`simulateDomains`).
 */
export function channelTracer(domain: number): Tracer {
  const where = (task: Task): number => Kernel.of(task)?.domainOf(task) ?? domain;
  return {
    spawn(task: Task, parent: Task): void {
      if (spawnChannel.hasSubscribers) spawnChannel.publish({ task, parent, domain: where(task) });
    },
    start(task: Task): void {
      if (startChannel.hasSubscribers) startChannel.publish({ task, domain: where(task) });
    },
    resume(task: Task): void {
      if (wakeChannel.hasSubscribers) wakeChannel.publish({ task, domain: where(task) });
    },
    cancel(task: Task): void {
      if (cancelChannel.hasSubscribers) cancelChannel.publish({ task, domain: where(task) });
    },
    end(task: Task): void {
      if (!endChannel.hasSubscribers) return;
      const status = task.status;
      endChannel.publish({ task, domain: where(task), status, error: status === "resolved" ? undefined : outcomeOf(task) });
    },
  };
}

/** @internal A call to another domain was sent; `task` is its proxy. */
export function publishCallStart(task: Task, name: string, from: number, domain: number): void {
  if (callStartChannel.hasSubscribers) callStartChannel.publish({ task, name, from, domain });
}

/** @internal The result of the call `task` stands for came back. */
export function publishCallEnd(task: Task, domain: number, ok: boolean, error: unknown): void {
  if (callEndChannel.hasSubscribers) callEndChannel.publish({ task, domain, ok, error: ok ? undefined : error });
}
