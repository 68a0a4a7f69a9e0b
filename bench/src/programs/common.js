// What the whole-program benchmarks share: loading Bobbin (this checkout's, and
// optionally another checkout's for a before/after row), the ways each system
// yields to its scheduler, and a bounded channel for the systems that have none.

import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import * as Effection from "effection";

/**
 * @bobbin/core and @bobbin/sync, from this workspace or, given `root`, from
 * another checkout's built packages (its sync imports its own core, so both
 * come from that checkout).
 */
export async function loadBobbin(root) {
  const from = (pkg) => (root ? pathToFileURL(resolve(root, `packages/${pkg}/dist/index.js`)).href : `@bobbin/${pkg}`);
  try {
    const S = await import(from("sync"));
    const B = await import(from("core"));
    return { B, S, error: null };
  } catch (e) {
    const msg =
      e && e.code === "ERR_MODULE_NOT_FOUND"
        ? `${root ? `${root}: ` : ""}@bobbin/core or @bobbin/sync is not built (pnpm --filter @bobbin/sync... build)`
        : `cannot import Bobbin${root ? ` from ${root}` : ""}: ${e?.message ? e.message.split("\n")[0] : e}`;
    return { B: null, S: null, error: msg };
  }
}

/** The short commit of a checkout (for the name of a before row). */
export function commitOf(root) {
  try {
    return execFileSync("git", ["-C", root, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown commit";
  }
}

/**
 * A receive in the Bobbin programs, whichever channel API the loaded
 * @bobbin/sync has: `recv()` evaluating to the value or `END` (this one), or
 * to `{ done, value }` (before it): `ended(r)` says whether a receive found the
 * channel closed and drained, `value(r)` is the value it received.
 */
export function channelApi(S) {
  if (S.END !== undefined) {
    const END = S.END;
    return { ended: (r) => r === END, value: (r) => r };
  }
  return { ended: (r) => r.done, value: (r) => r.value };
}

// Effection 4 has no public `yield`, and `sleep(0)` is a ≥ 1 ms timer. An action
// that resolves at once puts the task at the back of Effection's queue, as
// switch.js explains.
export const effectionYield = Effection.action((resolve) => {
  resolve();
  return noop;
}, "yield");
function noop() {}

/**
 * A bounded channel as a program without one writes it: a buffer and queues of
 * waiting receivers and senders. `wait()` makes what a waiter parks on and
 * `park(w)` parks on it: promises for async/await, `withResolvers` for
 * Effection. A send with room, or a receive with a value waiting, does not park.
 */
export class BoundedChannel {
  constructor(capacity) {
    this.capacity = capacity;
    this.buffer = [];
    this.receivers = [];
    this.senders = [];
    this.closed = false;
  }

  /** Sends at once if it can (returns true); otherwise returns false and the caller waits with `waitToSend`. */
  trySend(value) {
    if (this.closed) throw new Error("send on a closed channel");
    if (this.receivers.length > 0) {
      this.receivers.shift()({ done: false, value });
      return true;
    }
    if (this.buffer.length < this.capacity) {
      this.buffer.push(value);
      return true;
    }
    return false;
  }

  /** A receive that does not wait: `{ done, value }`, or undefined when it would wait. */
  tryRecv() {
    if (this.buffer.length > 0) {
      const value = this.buffer.shift();
      if (this.senders.length > 0) {
        const s = this.senders.shift();
        this.buffer.push(s.value);
        s.resolve();
      }
      return { done: false, value };
    }
    if (this.senders.length > 0) {
      const s = this.senders.shift();
      s.resolve();
      return { done: false, value: s.value };
    }
    return this.closed ? { done: true, value: undefined } : undefined;
  }

  close() {
    this.closed = true;
    for (const r of this.receivers.splice(0)) r({ done: true, value: undefined });
  }
}

/** async/await's side of {@link BoundedChannel}. */
export class AsyncChannel extends BoundedChannel {
  async send(value) {
    if (!this.trySend(value)) await new Promise((resolve) => this.senders.push({ value, resolve }));
  }

  async recv() {
    return this.tryRecv() ?? new Promise((resolve) => this.receivers.push(resolve));
  }
}

/** Effection's side of {@link BoundedChannel}. */
export class EffectionChannel extends BoundedChannel {
  *send(value) {
    if (this.trySend(value)) return;
    const w = Effection.withResolvers();
    this.senders.push({ value, resolve: w.resolve });
    yield* w.operation;
  }

  *recv() {
    const r = this.tryRecv();
    if (r !== undefined) return r;
    const w = Effection.withResolvers();
    this.receivers.push(w.resolve);
    return yield* w.operation;
  }
}
