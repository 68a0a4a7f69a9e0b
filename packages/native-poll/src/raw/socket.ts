/**
 * What the sockets of both raw-descriptor backends (epoll/kqueue readiness,
 * io_uring completions) are: a descriptor, the operations parked on each
 * side of it, and what a listener keeps (its file, its backlog, its guard).
 */
import type { SocketKind } from "@bobbin/unix";
import {
  BackendSocket,
  isStreamKind,
  type ParkedCount,
  type ShareGuard,
  type SocketBackend,
  type SocketFile,
  WaitQueue,
} from "@bobbin/unix/backend";

/**
 * @internal A socket over a raw descriptor. Its receiving side's operations
 * (read, accept, recvfrom) park among the record's readers (see `ReceiveQueue`).
 */
export abstract class RawSocket<B extends SocketBackend = SocketBackend> extends BackendSocket<B> {
  /** The descriptor, or -1 while there is none. */
  fd = -1;
  /** Parked on the sending side: write, connect, sendto. */
  readonly writers: WaitQueue;
  /**
   * `close` operations waiting for what the socket still has to do: made by
   * the first that waits (an open connection holds no queue of its own).
   */
  #closers: WaitQueue | null = null;
  readonly #parked: ParkedCount;
  sendShut = false;
  /** A Unix listener's socket file, unlinked when it closes (as libuv does); never set for an adopted listener. */
  file: SocketFile | null = null;
  /** A listener's backlog (for `share`). */
  backlog = 0;
  /** Made by the first `share` of a listener; sealed before its fd is closed. */
  guard: ShareGuard | null = null;

  /** @param parked the backend's count of parked operations, which holds its handle in Node's loop. */
  constructor(kind: SocketKind, backend: B, parked: ParkedCount) {
    super(kind, backend);
    this.#parked = parked;
    this.writers = new WaitQueue(parked);
  }

  /** Where `close` operations wait (made now if none waited yet). */
  get closers(): WaitQueue {
    this.#closers ??= new WaitQueue(this.#parked);
    return this.#closers;
  }

  /** Wakes the `close` operations waiting, if any. */
  wakeClosers(): void {
    this.#closers?.wakeAll();
  }

  protected override get parkedCount(): ParkedCount {
    return this.#parked;
  }

  get isStream(): boolean {
    return isStreamKind(this.kind);
  }

  override toString(): string {
    return `Socket(${this.kind}, ${this.state}, fd ${this.fd})`;
  }

  /**
   * A Unix listener's file goes with it, as libuv's pipes' do: once, and only
   * while it is still the socket bound here (see `SocketFile`).
   */
  unlinkPath(): void {
    this.file?.remove();
    this.file = null;
  }
}
