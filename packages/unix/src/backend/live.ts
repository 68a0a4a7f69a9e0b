/**
 * The sockets of a backend that still hold something of the system's
 * (a Node handle, a name lookup in flight, a descriptor), so that `drain`
 * and a domain's `finaliser` can close them all and the run end only once
 * they are gone.
 */

/**
 * A backend's sockets that hold something of the system's, and a Promise
 * for the moment none does.
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
export class LiveSockets<S> {
  readonly #sockets = new Set<S>();
  #drained: (() => void) | null = null;

  /** How many sockets hold something. */
  get size(): number {
    return this.#sockets.size;
  }

  /** Whether `s` holds something. */
  has(s: S): boolean {
    return this.#sockets.has(s);
  }

  /** `s` holds something now. */
  add(s: S): void {
    this.#sockets.add(s);
  }

  /** `s` holds nothing any more; the last one settles `drained()`. */
  delete(s: S): void {
    if (!this.#sockets.delete(s) || this.#sockets.size !== 0 || this.#drained === null) return;
    const resolve = this.#drained;
    this.#drained = null;
    resolve();
  }

  /** A copy of the sockets, to close them (closing one changes the set). */
  all(): S[] {
    return [...this.#sockets];
  }

  /** Settles once no socket holds anything. */
  drained(): Promise<void> {
    if (this.#sockets.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#drained = resolve;
    });
  }
}
