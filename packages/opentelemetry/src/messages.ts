/**
 * What core's diagnostics channels publish (`B.channels`), as this package
 * reads it, and subscribing to several channels at once.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type * as B from "@bobbin/core";

/** @internal A message of a task channel (spawn, start, wake, cancel, end). */
export interface TaskMessage {
  readonly task: B.Task<unknown>;
  readonly parent?: B.Task<unknown>;
  readonly domain: number;
  readonly status?: B.TaskStatus;
  readonly error?: unknown;
}

/** @internal A message of the blocked-task channel. */
export interface BlockedMessage {
  readonly task: B.Task<unknown>;
  readonly domain: number;
  readonly ms: number;
  readonly thresholdMs: number;
  readonly resumedFrom: string;
}

/** @internal A message of the call channels. */
export interface CallMessage {
  readonly task: B.Task<unknown>;
  readonly name?: string;
  readonly from?: number;
  readonly domain: number;
  readonly ok?: boolean;
}

/** @internal Subscribes each handler to its channel; returns the function that unsubscribes them all. */
export function listen(handlers: readonly (readonly [string, (message: unknown) => void])[]): () => void {
  for (const [name, handler] of handlers) subscribe(name, handler);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    for (const [name, handler] of handlers) unsubscribe(name, handler);
  };
}
