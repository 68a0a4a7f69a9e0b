/**
 * The native backend's I/O: the poller and its epoll/kqueue set, the socket
 * of each registered fd, the operations parked on them, and how readiness
 * passes from one waiter to the next. The contract's entry points are
 * `backend.ts`'s; what streams do with reads ahead and queued sends is
 * `stream.ts`'s.
 */
import type { ParkedCount } from "@bobbin/unix/backend";
import type { ArenaPool } from "../arena.js";
import type { NativeSyscalls } from "../load.js";
import { PollEvent, type Poller } from "../poller.js";
import { FdTable } from "../raw/fd-table.js";
import type { RawIo } from "../raw/io.js";
import { type NativeSocket, type Reader, STAGE_MAX } from "./socket.js";

const { READABLE, WRITABLE } = PollEvent;
/** Rooms for unsent bytes kept for the next socket that backs up (more are left to the GC). */
const SPARE_ROOMS = 4;

/** @internal */
export class EpollIo implements RawIo<NativeSocket> {
  /** Sockets by fd, and those with an open fd. */
  readonly fds = new FdTable<NativeSocket>();
  /** The poller is gone (the backend drained): fds are closed directly. */
  destroyed = false;
  /** Rooms a socket's unsent bytes left (see `stream.ts`'s `keepUnsent`). */
  readonly #spareRooms: ArrayBuffer[] = [];

  constructor(
    readonly poller: Poller,
    readonly sys: NativeSyscalls,
    readonly solSocket: number,
    readonly soReuseAddr: number,
    /** The operations parked on sockets: while there are some, the poller keeps Node alive. */
    readonly parked: ParkedCount,
    /** The arena pool behind `readSlot`. */
    readonly pool: ArenaPool,
  ) {}

  /** The socket of a registered fd. */
  socketOf(fd: number): NativeSocket {
    return this.fds.get(fd)!;
  }

  /** Registers `fd` as `s`'s, for both directions, edge-triggered. */
  attach(s: NativeSocket, fd: number): void {
    try {
      this.poller.add(fd, READABLE | WRITABLE, "edge");
    } catch (error) {
      this.sys.close(fd);
      throw error;
    }
    s.readable = true;
    s.writable = true;
    s.hup = false;
    this.fds.add(s, fd);
  }

  /** Unregisters and closes `s`'s fd (the socket object lives on). */
  closeFd(s: NativeSocket): void {
    const fd = this.fds.remove(s);
    if (fd < 0) return;
    if (this.destroyed) {
      this.sys.close(fd);
      return;
    }
    try {
      this.poller.close(fd);
    } catch {
      // close(2) lets go of the number even when it reports an error (EINTR,
      // EIO): the fd is gone, and the socket's close goes on.
    }
  }

  /**
   * Closes the socket for the program at once: its fd goes (close(2) does
   * not wait), and its waiters retry, see it closed and throw `SocketClosed`.
   */
  close(s: NativeSocket): void {
    s.state = "closed";
    s.writing = null;
    s.delivered = null;
    this.dropUnsent(s);
    s.lent?.takeBack();
    // No domain may start duplicating the fd any more; those doing it finish first.
    s.guard?.seal();
    this.closeFd(s);
    s.unlinkPath();
    s.wakeReaders();
    s.writers.wakeAll();
    s.wakeClosers();
  }

  /** A room of `STAGE_MAX` bytes for a socket's unsent bytes. */
  unsentRoom(): ArrayBuffer {
    return this.#spareRooms.pop() ?? new ArrayBuffer(STAGE_MAX);
  }

  /** `s` holds no unsent bytes any more: their room is kept for the next socket that backs up. */
  dropUnsent(s: NativeSocket): void {
    const held = s.unsent;
    if (held === null) return;
    s.unsent = null;
    if (this.#spareRooms.length < SPARE_ROOMS) this.#spareRooms.push(held.buffer as ArrayBuffer);
  }

  /** Wakes the socket's first reader. */
  wakeReader(s: NativeSocket): void {
    s.wakeReader();
    this.syncWant(s);
  }

  /**
   * The readers of `s` changed: the poller reads ahead for the first one
   * when it wants bytes (a `read`, into its length), and for nobody else
   * (accept, recvfrom and readSlot make their own system calls).
   */
  syncWant(s: NativeSocket): void {
    if (s.fd < 0) return;
    const first = s.firstReader as Reader | undefined;
    this.poller.want(s.fd, first !== undefined && s.delivered === null ? (first.wanted ?? 0) : 0);
  }

  /** Readiness a finished or cancelled reader did not use goes to the next one (not past a reader woken with bytes). */
  passRead(s: NativeSocket): void {
    if (s.readerCount !== 0 && s.delivered === null && (s.readable || s.state === "closed")) this.wakeReader(s);
  }

  /** The same for writers (a write in progress keeps the side). */
  passWrite(s: NativeSocket): void {
    if (s.writers.length !== 0 && (s.writing === null || s.state === "closed") && (s.writable || s.state === "closed")) {
      s.writers.wakeFirst();
    }
  }

  /** A connect or sendto met a socket that is not writable: the next edge says when it is. */
  waitWritable(s: NativeSocket): void {
    s.writable = false;
  }

  isWritable(s: NativeSocket): boolean {
    return s.writable;
  }
}
