/**
 * Counting what a process holds open, to check that a program released
 * every socket.
 */
import { readdirSync, readlinkSync } from "node:fs";

/** A process's open file descriptors: fd → what it is (`socket:[…]`, `pipe:[…]`, a path…). */
export type FdTable = Map<number, string>;

/**
 * This process's open file descriptors (Linux: `/proc/self/fd`), or `null`
 * where that is not available.
 *
 * @example
 * ```ts
 * const before = fdTable();
 * ```
 */
export function fdTable(): FdTable | null {
  let names: string[];
  try {
    names = readdirSync("/proc/self/fd");
  } catch {
    return null;
  }
  const table: FdTable = new Map();
  for (const name of names) {
    try {
      table.set(Number(name), readlinkSync(`/proc/self/fd/${name}`));
    } catch {
      // the descriptor of the listing itself, closed by now
    }
  }
  return table;
}

/**
 * How many descriptors this process has open (`null` where unknown).
 *
 * @example
 * ```ts
 * openFds();   // e.g. 19
 * ```
 */
export function openFds(): number | null {
  return fdTable()?.size ?? null;
}

/**
 * How many of this process's descriptors are sockets (`null` where unknown).
 *
 * @example
 * ```ts
 * openSockets();   // 0 once every socket is closed
 * ```
 */
export function openSockets(): number | null {
  const table = fdTable();
  if (table === null) return null;
  let n = 0;
  for (const what of table.values()) if (what.startsWith("socket:")) n++;
  return n;
}

/** What was opened between two tables, and what it is. */
export interface FdDiff {
  /** Sockets open now that were not before: a leak, if the program should have closed everything. */
  readonly sockets: number;
  /** Other descriptors open now that were not before, by kind (e.g. the event loop's own). */
  readonly others: string[];
}

/**
 * The descriptors open in `after` that were not in `before`, compared by
 * kind (a socket, a pipe, an epoll instance, a path): how many more of each.
 *
 * The event loops keep a few descriptors for the life of the thread once
 * they have used them, which are not leaks: libuv reserves one (`/dev/null`)
 * at the first `listen` to survive `EMFILE`, and the native poller keeps
 * its epoll and eventfd descriptors.
 *
 * @example
 * ```ts
 * const d = diffFds(before, fdTable()!);
 * d.sockets;   // 0: no socket left open
 * ```
 */
export function diffFds(before: FdTable, after: FdTable): FdDiff {
  const kind = (what: string): string => what.replace(/:\[\d+\]$/, "");
  const counts = (table: FdTable): Map<string, number> => {
    const m = new Map<string, number>();
    for (const what of table.values()) m.set(kind(what), (m.get(kind(what)) ?? 0) + 1);
    return m;
  };
  const was = counts(before);
  let sockets = 0;
  const others: string[] = [];
  for (const [k, n] of counts(after)) {
    const more = n - (was.get(k) ?? 0);
    if (more <= 0) continue;
    if (k === "socket") sockets += more;
    else for (let i = 0; i < more; i++) others.push(k);
  }
  return { sockets, others };
}

/**
 * Node's live handles that are sockets or servers (`TCPWrap`,
 * `TCPServerWrap`, `UDPWrap`), i.e. libuv sockets not closed yet.
 *
 * @example
 * ```ts
 * liveSocketHandles();   // 0 once every socket is closed
 * ```
 */
export function liveSocketHandles(): number {
  return process.getActiveResourcesInfo().filter((r) => r === "TCPWrap" || r === "TCPServerWrap" || r === "UDPWrap").length;
}

/**
 * One line saying whether every socket was released since `before`.
 *
 * @example
 * ```ts
 * const { clean, line } = releaseReport(before);
 * console.log(line);   // "fds: 19 before, 20 after; no socket left open (new: /dev/null, the event loop's own)"
 * ```
 */
export function releaseReport(before: FdTable | null): { clean: boolean; line: string } {
  const handles = liveSocketHandles();
  const after = fdTable();
  if (before === null || after === null) {
    const clean = handles === 0;
    return { clean, line: `${handles} socket handle(s) alive (fds not countable here): ${clean ? "no socket left open" : "LEAK"}` };
  }
  const d = diffFds(before, after);
  const clean = d.sockets === 0 && handles === 0;
  const extra = d.others.length === 0 ? "" : ` (new: ${d.others.join(", ")}: the event loop's own, kept for the thread's life)`;
  return {
    clean,
    line: clean
      ? `fds: ${before.size} before, ${after.size} after; no socket left open${extra}`
      : `fds: ${before.size} before, ${after.size} after; LEAK: ${d.sockets} socket fd(s), ${handles} socket handle(s) still open`,
  };
}
