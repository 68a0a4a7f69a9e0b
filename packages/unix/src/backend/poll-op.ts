/**
 * The simplest way to write a backend's operation: a function that tries it
 * once, and a queue to wait in while it would block. The socket wakes the
 * queue when something about it changed; the operation tries again (poll(2)'s
 * model: readiness is a question asked again, never an event to lose).
 */
import { SocketClosed } from "../errors.js";
import { Parked } from "./parked.js";
import type { WaitQueue } from "./wait-queue.js";

/**
 * What a {@link PollOp}'s try returns while the operation would block (the `EAGAIN` of a non-blocking call).
 *
 * @example
 * ```ts
 * new PollOp(sock, sock.waiters, "accept", () => sock.backlog.shift() ?? AGAIN);
 * ```
 */
export const AGAIN: unique symbol = Symbol("AGAIN");

/**
 * An operation that calls `tryOnce()` and, while it returns {@link AGAIN},
 * waits in `queue` until woken, then calls it again; it fails with
 * `SocketClosed` once `socket` is closed. `tryOnce` returns the result, or
 * throws the operation's error.
 *
 * @example
 * ```ts
 * accept(sock: Socket) {
 *   const s = sock as MySocket;   // Node's 'connection' callback: s.backlog.push(c); s.waiters.wakeAll()
 *   return new PollOp(s, s.waiters, "accept", () => s.backlog.shift() ?? AGAIN);
 * }
 * ```
 * @throws SocketClosed, what `tryOnce` throws, `Cancelled`, `Timeout`.
 */
export class PollOp<T> extends Parked<T> {
  readonly #socket: { readonly state: string };
  readonly #queue: WaitQueue;
  readonly #name: string;
  readonly #tryOnce: () => T | typeof AGAIN;

  /**
   * @param socket fails the operation once it is `closed`.
   * @param queue where it waits: the socket wakes it when it may go on.
   * @param name the operation's name, for errors and dumps ("read").
   * @param tryOnce tries the operation: its result, or `AGAIN`.
   */
  constructor(socket: { readonly state: string }, queue: WaitQueue, name: string, tryOnce: () => T | typeof AGAIN) {
    super(name);
    this.#socket = socket;
    this.#queue = queue;
    this.#name = name;
    this.#tryOnce = tryOnce;
  }

  protected attempt(): boolean {
    if (this.#socket.state === "closed") throw new SocketClosed(`${this.#name}()`);
    const result = this.#tryOnce();
    if (result === AGAIN) return false;
    this.value = result;
    return true;
  }

  protected wait(): void {
    this.#queue.add(this);
  }

  protected leave(): void {
    this.#queue.leave(this);
  }
}
