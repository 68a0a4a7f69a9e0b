/**
 * Telling deadlocks. A run whose tasks all wait with nothing left to wake
 * them (Node's loop drains: see kernel/deadlock.ts) fails with `Deadlock`. A
 * cycle of waits (see cycles.ts) is looked for when a task parks on a wait
 * held by another task (a contended lock), once the domain has finished its
 * current slice (at most once per 50 ms), and again later while such waits
 * last — not per step, and never while no such wait exists — so that it is found even when unrelated
 * Node handles (a server, an interval) keep the process alive: the run fails
 * with `Deadlock` when no task is left that could break the cycle (and is
 * settled at once if cancelling its tasks did not end the cycle), and the
 * process gets a warning (`BOBBIN_DEADLOCK`) when one could (a task above
 * the cycle waiting on a timeout may cancel it) — unless the run has failed
 * already, its tasks being cancelled.
 */
import { localDump } from "../diagnostics/dump.js";
import { formatDump } from "../diagnostics/format.js";
import { Deadlock } from "../errors.js";
import type { Kernel } from "../kernel/kernel.js";
import { cycleAmong, deadlockedTasks, describeCycle, nobodyCanBreak } from "./cycles.js";

/** @internal The error of a run whose tasks can never be woken: the cycle, if there is one, and the tree. */
export function deadlockError(kernel: Kernel): Deadlock {
  const { stuck } = deadlockedTasks(kernel);
  const cycle = stuck.size === 0 ? null : describeCycle(cycleAmong(stuck));
  return new Deadlock(kernel.liveTasks, { dump: localDump(kernel), cycle });
}

/** Re-checks while held waits last, ever less often (then every 5 s). */
const RECHECK_MS = [50, 250, 1000, 5000];
/** At most one check per this many ms, however often locks are contended. */
const MIN_INTERVAL_MS = 50;

interface Watch {
  /** A check is scheduled. */
  scheduled: boolean;
  /** Its timer, cleared when the run ends (no timer outlives the run). */
  pending: NodeJS.Timeout | null;
  /** Index into `RECHECK_MS` of the next re-check. */
  backoff: number;
  /** When the last check ran (`Date.now()`). */
  lastCheck: number;
  /** The Deadlock the run was failed with; if the cycle outlives the cancellation, the run is abandoned with it. */
  failed: Deadlock | null;
  /** The deadlocked sets already warned about (their uids), not to warn twice. */
  readonly warned: Set<string>;
}

const watches = new WeakMap<Kernel, Watch>();

/** @internal A task of `kernel` parked on a wait another task holds: look for a cycle soon. */
export function heldWaitParked(kernel: Kernel): void {
  let watch = watches.get(kernel);
  if (watch === undefined)
    watches.set(kernel, (watch = { scheduled: false, pending: null, backoff: 0, lastCheck: 0, failed: null, warned: new Set() }));
  if (watch.scheduled) return;
  watch.scheduled = true;
  watch.backoff = 0;
  const wait = watch.lastCheck + MIN_INTERVAL_MS - Date.now();
  watch.pending = setTimeout(check, Math.max(0, wait), kernel, watch).unref();
}

/** @internal The run of `kernel` settled: cancel its next check. */
export function stopWatching(kernel: Kernel): void {
  const watch = watches.get(kernel);
  if (watch === undefined) return;
  watches.delete(kernel);
  if (watch.pending !== null) clearTimeout(watch.pending);
}

function check(kernel: Kernel, watch: Watch): void {
  watch.scheduled = false;
  watch.pending = null;
  watch.lastCheck = Date.now();
  if (kernel.life.done) return;
  const { stuck, held } = deadlockedTasks(kernel);
  if (stuck.size === 0) {
    if (held) recheckLater(kernel, watch);
    return;
  }
  if (nobodyCanBreak(stuck)) {
    if (watch.failed !== null) {
      kernel.life.abandon(watch.failed); // its tasks were cancelled and still wait for each other: nothing will end them
      return;
    }
    watch.failed = deadlockError(kernel);
    kernel.life.fail(watch.failed);
    recheckLater(kernel, watch);
    return;
  }
  if (kernel.life.failing) {
    // The task above the cycle that could break it is the one being cancelled: no need to warn.
    recheckLater(kernel, watch);
    return;
  }
  const cycle = describeCycle(cycleAmong(stuck));
  const key = [...stuck.keys()]
    .map((t) => t.uid)
    .sort((a, b) => a - b)
    .join(",");
  if (!watch.warned.has(key)) {
    watch.warned.add(key);
    process.emitWarning(
      `tasks wait for each other in a cycle and none of them can go on: ${cycle}. ` +
        "Only a task above them can end this, by cancelling one of them (after a timeout, say)",
      { code: "BOBBIN_DEADLOCK", detail: localDumpText(kernel) },
    );
  }
  recheckLater(kernel, watch);
}

/** While waits held by other tasks may still close a cycle (an await that comes later, say), look again. */
function recheckLater(kernel: Kernel, watch: Watch): void {
  watch.scheduled = true;
  const ms = RECHECK_MS[Math.min(watch.backoff++, RECHECK_MS.length - 1)];
  watch.pending = setTimeout(check, ms, kernel, watch).unref();
}

function localDumpText(kernel: Kernel): string {
  return formatDump(localDump(kernel));
}
