/**
 * The sockets of a backend that still hold something of the system's
 * (a Node handle, a name lookup in flight, a descriptor), so that `drain`
 * and a domain's `finaliser` can close them all and the run end only once
 * they are gone.
 */
import type { BackendSocket } from "./socket.js";

/**
 * A backend's sockets that hold something of the system's, and a Promise
 * for the moment none does. The list runs through the sockets themselves
 * (`BackendSocket`'s links), in the order they came: a set would cost
 * every connection an entry in a table as large as the most sockets ever
 * held at once.
 *
 * @example
 * ```ts
 * readonly live = new LiveSockets<MySocket>();
 * drain(): Promise<void> {
 *   for (const s of this.live.all()) s.closeNow();
 *   return this.live.drained();
 * }
 * ```
 * @throws never
 */
export class LiveSockets<S extends BackendSocket> {
  #first: S | null = null;
  #last: S | null = null;
  #size = 0;
  #drained: (() => void) | null = null;

  /** How many sockets hold something. */
  get size(): number {
    return this.#size;
  }

  /** Whether `s` holds something. */
  has(s: S): boolean {
    return s.livePrev !== null || this.#first === s;
  }

  /** `s` holds something now. */
  add(s: S): void {
    if (this.has(s)) return;
    const last = this.#last;
    s.livePrev = last;
    s.liveNext = null;
    if (last === null) this.#first = s;
    else last.liveNext = s;
    this.#last = s;
    this.#size++;
  }

  /** `s` holds nothing any more; the last one settles `drained()`. */
  delete(s: S): void {
    if (!this.has(s)) return;
    const prev = s.livePrev as S | null;
    const next = s.liveNext as S | null;
    if (prev === null) this.#first = next;
    else prev.liveNext = next;
    if (next === null) this.#last = prev;
    else next.livePrev = prev;
    s.livePrev = s.liveNext = null;
    if (--this.#size !== 0 || this.#drained === null) return;
    const resolve = this.#drained;
    this.#drained = null;
    resolve();
  }

  /** A copy of the sockets, to close them (closing one changes the list). */
  all(): S[] {
    const out: S[] = [];
    for (let s = this.#first; s !== null; s = s.liveNext as S | null) out.push(s);
    return out;
  }

  /** Settles once no socket holds anything. */
  drained(): Promise<void> {
    if (this.#size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#drained = resolve;
    });
  }
}
