/**
 * Listening sockets across domains, the backend's half (see `Backend.share`
 * and `Backend.adopt`): a guard that keeps a descriptor valid while other
 * domains duplicate it, and the two steps most backends take.
 *
 * The owner seals the guard before it closes the descriptor, and waits for
 * the duplications in progress (a few microseconds for `dup(2)`, the time of
 * a `spawn` for a backend that needs a relay process) to end first. A
 * receiver that finds the guard sealed makes a socket that is already closed.
 */
import type { Address, SharedSocket, SocketKind } from "../contract.js";

/** The sign bit of the guard's word: the owner is closing the descriptor. */
const SEALED = 1 << 30;
/** How long `seal` waits for duplications in progress. */
const SEAL_WAIT_MS = 5000;

/**
 * Keeps a shared descriptor valid while other domains duplicate it: one
 * `Int32` in a SharedArrayBuffer counting the duplications in progress, and
 * a bit set once the owner closes. Receivers `pin` before they duplicate the
 * descriptor and `unpin` right after; the owner `seal`s before closing it.
 *
 * @example
 * ```ts
 * // receiving domain (Backend.adopt)
 * const guard = ShareGuard.of(shared.guard);
 * if (!guard.pin()) return closedSocket(shared.kind);   // the owner closed it meanwhile
 * let fd: number;
 * try { fd = sys.dup(shared.fd); } finally { guard.unpin(); }
 * // owning domain (close)
 * s.guard?.seal();
 * sys.close(s.fd);
 * ```
 */
export class ShareGuard {
  private readonly cell: Int32Array;

  /** A new guard, or the guard of a buffer that came from another domain. */
  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.cell = new Int32Array(buffer, 0, 1);
  }

  /**
   * The guard of a `SharedSocket`'s buffer.
   * @throws TypeError when `buffer` is not a guard's buffer.
   */
  static of(buffer: SharedArrayBuffer): ShareGuard {
    if (!(buffer instanceof SharedArrayBuffer) || buffer.byteLength < 4) {
      throw new TypeError("a shared socket arrived without its guard: both domains must run the same version of @bobbin/unix");
    }
    return new ShareGuard(buffer);
  }

  /** Whether the owner closed (or is closing) the descriptor. */
  get sealed(): boolean {
    return (Atomics.load(this.cell, 0) & SEALED) !== 0;
  }

  /** Receivers: holds the descriptor open; false when the owner closed it (do not touch the descriptor then). */
  pin(): boolean {
    for (;;) {
      const v = Atomics.load(this.cell, 0);
      if ((v & SEALED) !== 0) return false;
      if (Atomics.compareExchange(this.cell, 0, v, v + 1) === v) return true;
    }
  }

  /** Receivers: the duplicate is made (or failed); the owner may close. */
  unpin(): void {
    Atomics.sub(this.cell, 0, 1);
    Atomics.notify(this.cell, 0);
  }

  /**
   * The owner: no receiver may pin the descriptor any more; returns once
   * those that had pinned it unpinned it (at most a few seconds, in case a
   * receiving thread died), so that the descriptor can be closed.
   */
  seal(): void {
    const deadline = Date.now() + SEAL_WAIT_MS;
    for (let v = Atomics.or(this.cell, 0, SEALED) | SEALED; (v & ~SEALED) !== 0; v = Atomics.load(this.cell, 0)) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      Atomics.wait(this.cell, 0, v, left);
    }
  }
}

/**
 * What {@link describeListener} needs of a listening socket: its kind, and a
 * place for its guard (made at its first share; the socket seals it before
 * closing its descriptor).
 *
 * @example
 * ```ts
 * class MySocket extends BackendSocket { guard: ShareGuard | null = null; }
 * ```
 */
export interface Shareable {
  readonly kind: SocketKind;
  guard: ShareGuard | null;
}

/**
 * `Backend.share`'s answer for a listening socket over descriptor `fd`: its
 * guard is made at the first share.
 *
 * @example
 * ```ts
 * share(sock: Socket): SharedSocket {
 *   const s = sock as MySocket;
 *   return describeListener(s, s.fd, this.localAddress(s), s.backlog);
 * }
 * // closing it: s.guard?.seal(), then close(2) the descriptor
 * ```
 * @throws never
 */
export function describeListener(s: Shareable, fd: number, address: Address, backlog: number): SharedSocket {
  s.guard ??= new ShareGuard();
  return { kind: s.kind, fd, address, backlog, guard: s.guard.buffer };
}

/**
 * For `Backend.adopt` on raw descriptors: a descriptor of this domain's own
 * for another domain's listening socket, what `dup` returns while the
 * owner's guard is pinned; null when the owner closed it first (the
 * descriptor is never touched then: make a socket that is already `closed`).
 *
 * @example
 * ```ts
 * adopt(shared: SharedSocket): Socket {
 *   const fd = adoptDescriptor(shared, (fd) => sys.dup(fd));
 *   const s = new MySocket(shared.kind, this);
 *   if (fd === null) s.state = "closed";
 *   else { this.attach(s, fd); s.state = "listening"; }
 *   return s;
 * }
 * ```
 * @throws TypeError when `shared.guard` is not a guard's buffer; what `dup` throws.
 */
export function adoptDescriptor(shared: SharedSocket, dup: (fd: number) => number): number | null {
  const guard = ShareGuard.of(shared.guard);
  if (!guard.pin()) return null;
  try {
    return dup(shared.fd);
  } finally {
    guard.unpin();
  }
}
