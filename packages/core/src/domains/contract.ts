/**
 * What a domain's host offers the rest of core: the other domains, and the
 * way a checked call reaches one of them. `host.ts` installs a host on a
 * run's first call; the pieces that start calls (`call.ts`, the remote and
 * simulated calls) and the dump see it only through this.
 */
import type { Transferable } from "node:worker_threads";
import type { DomainHost } from "../kernel/host.js";
import type { Task } from "../kernel/task.js";
import type { SpawnOptions } from "../spawn-options.js";
import type { ParallelTask } from "./define-task.js";
import type { DomainLink } from "./link.js";
import type { Slot } from "./portable.js";

/** @internal A call `call`/`parallel` has checked and is about to start. */
export interface CallRequest {
  readonly task: ParallelTask<unknown[], unknown>;
  /** The arguments, their portables taken out (`encodePortables`). */
  readonly sent: unknown[];
  /** Where the arguments held portables; null when they held none. */
  readonly slots: readonly Slot[] | null;
  /** Whether the caller chose the domain (a pinned call is never shared). */
  readonly pinned: boolean;
  /** The last element of `sent` is the caller's context values, not an argument. */
  readonly contexts: boolean;
  readonly transfer: readonly Transferable[];
  /** Options of the caller's task standing for the call. */
  readonly spawn: SpawnOptions;
}

/** @internal A domain's host: the kernel's view of the other domains, and the way calls reach them. */
export interface Domains extends DomainHost {
  /** The mailbox to the other domains; null when they are simulated on this thread. */
  readonly link: DomainLink | null;
  /** Worker domains a call from `task` may land on: every one but the task's own. */
  others(task: Task): readonly number[];
  /**
   * Starts `request` on `domain` and returns the caller's task standing for it.
   * @throws Uncloneable when an argument cannot cross (then nothing started).
   */
  start(domain: number, request: CallRequest): Task<unknown>;
}
