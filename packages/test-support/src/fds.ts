/** This process's file descriptors, where it can list them (`/proc/self/fd`: Linux). */
import { existsSync, readdirSync, readlinkSync } from "node:fs";

/** Whether this process can list its descriptors; tests that count them skip elsewhere. */
export const procFds: boolean = existsSync("/proc/self/fd");

/** Why descriptor-counting tests skip here (`""` where they run), for their titles. */
export const noProcFds: string = procFds ? "" : ` (skipped: no /proc/self/fd on ${process.platform} to count descriptors with)`;

/** What each open descriptor is (`socket:[123]`, `/dev/null`, `anon_inode:[eventpoll]`…). */
function targets(): string[] {
  const found: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      found.push(readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      // closed meanwhile (the directory's own descriptor, say)
    }
  }
  return found;
}

/**
 * The descriptors open in this process, those `ignore` accepts left out;
 * null where they cannot be listed.
 * @example
 * ```ts
 * const before = openFds((target) => target === "/dev/null");
 * ```
 */
export function openFds(ignore?: (target: string) => boolean): number | null {
  if (!procFds) return null;
  return ignore === undefined ? readdirSync("/proc/self/fd").length : targets().filter((t) => !ignore(t)).length;
}

/**
 * The descriptors whose target contains `kind` (`"socket"`, `"eventpoll"`,
 * `"io_uring"`); null where they cannot be listed.
 * @example
 * ```ts
 * expect(openFdsOf("eventpoll")).toBe(before);
 * ```
 */
export function openFdsOf(kind: string): number | null {
  return procFds ? targets().filter((t) => t.includes(kind)).length : null;
}
