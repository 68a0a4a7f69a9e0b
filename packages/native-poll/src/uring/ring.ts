/**
 * The JavaScript half of the ring (native/uring.h): requests are written
 * straight into the shared SQE array, completions read straight from the CQ
 * ring, provided buffers given back to the buffer ring and staging slots
 * handed out, all without calling into the addon. Only `submit()`
 * (io_uring_enter) crosses into C++; the addon's pump does it once per batch.
 *
 * A request's user data is two 32-bit words: the fd and a tag (the backend's
 * generation and kind of request).
 */
import { errnoException } from "../errno.js";
import { Errno } from "../syscalls.js";
import type { NativeUringHandle, UringAddon, UringConfig, UringConstants } from "./native.js";

/** Receives the completions {@link Ring.reap} reads, and what failed in the addon's pump. */
export interface CompletionSink {
  complete(fd: number, tag: number, res: number, flags: number): void;
  /** The pump failed (`io_uring_enter`, `uv_poll`), or the ring's memory was detached: the ring is of no use. */
  failed(error: Error): void;
}

const TWO_32 = 2 ** 32;

/**
 * The addon's callback, holding the ring weakly: the addon holds the
 * callback, so a ring whose backend was never drained can still be collected
 * (its finalizer closes it).
 */
function relay(ring: WeakRef<Ring>): (status: number, failed?: string) => void {
  return (status, failed) => ring.deref()?.deliver(status, failed);
}

/** @internal One ring of the uring backend, with its buffers and staging area. */
export class Ring {
  readonly handle: NativeUringHandle;
  /** `[0]`: the SQ tail as written here (the addon publishes it); `[1]`: 1 while the addon's pump runs. The addon's memory. */
  readonly control: Int32Array;
  readonly constants: UringConstants;
  /** The provided buffers, `bufferSize` bytes each, buffer id `bid` at `bid * bufferSize`. */
  readonly buffers: Uint8Array;
  readonly bufferSize: number;
  /** Buffers in the ring as far as this side knows: each completion that carries one took one. */
  buffersInRing: number;
  /** The staging area: `stagingSize` bytes per slot, what sends point at. */
  readonly staging: Uint8Array;
  readonly stagingSize: number;

  private readonly sqes: Int32Array;
  private readonly words: Uint32Array;
  private readonly cqes: Int32Array;
  private readonly sqHeadWord: number;
  private readonly sqTailWord: number;
  private readonly sqMask: number;
  private readonly sqEntries: number;
  private readonly cqHeadWord: number;
  private readonly cqTailWord: number;
  private readonly cqMask: number;
  /** Completions copied out of the CQ ring by `reap`. */
  private readonly batch: Int32Array;
  private tail: number;

  private readonly bufferWords: Uint32Array;
  private readonly bufferHalves: Uint16Array;
  private readonly bufferTailHalf: number;
  private readonly bufferMask: number;
  private bufferTail: number;
  private readonly bufferAddress: Float64Array;

  private readonly freeSlots: Int32Array;
  private freeCount: number;
  private readonly stagingBase: number;

  // Words of the SQEs this ring writes (opcode | flags << 8 | ioprio << 16).
  private readonly recvWord: number;
  private readonly acceptWord: number;
  private readonly sendFlags: number;
  private readonly acceptFlags: number;

  /**
   * Counters for tuning: batches of completions the addon delivered from
   * Node's loop, entries made from JavaScript, completions reaped.
   */
  readonly stats = { batches: 0, submits: 0, completions: 0 };
  private readonly sink: CompletionSink;

  /** Completions go to `sink`: those the addon delivers, and those `submit` brings. */
  constructor(addon: UringAddon, config: UringConfig, sink: CompletionSink) {
    const c = addon.uringConstants;
    this.constants = c;
    this.sink = sink;
    const h = new addon.NativeUring(relay(new WeakRef(this)), config);
    this.handle = h;
    this.control = new Int32Array(h.control);
    const l = h.layout;
    this.words = new Uint32Array(h.rings);
    this.sqes = new Int32Array(h.sqes);
    this.sqHeadWord = l.sqHead >> 2;
    this.sqTailWord = l.sqTail >> 2;
    this.sqMask = this.words[l.sqMask >> 2]!;
    this.sqEntries = this.words[l.sqEntries >> 2]!;
    this.cqHeadWord = l.cqHead >> 2;
    this.cqTailWord = l.cqTail >> 2;
    this.cqMask = this.words[l.cqMask >> 2]!;
    const cqEntries = this.words[l.cqEntries >> 2]!;
    this.cqes = new Int32Array(h.rings, l.cqes, cqEntries * 4);
    this.batch = new Int32Array(cqEntries * 4);
    this.tail = this.words[this.sqTailWord]!;
    this.control[0] = this.tail | 0;

    this.buffers = new Uint8Array(h.buffers);
    this.bufferSize = config.bufferSize;
    this.buffersInRing = config.buffers;
    this.bufferWords = new Uint32Array(h.bufferRing);
    this.bufferHalves = new Uint16Array(h.bufferRing);
    this.bufferTailHalf = c.BUFFER_RING_TAIL >> 1;
    this.bufferMask = config.buffers - 1;
    this.bufferTail = this.bufferHalves[this.bufferTailHalf]!;
    this.bufferAddress = new Float64Array(config.buffers);
    for (let bid = 0; bid < config.buffers; bid++) this.bufferAddress[bid] = h.bufferBase + bid * config.bufferSize;

    this.staging = new Uint8Array(h.staging);
    this.stagingSize = config.stagingSize;
    this.stagingBase = h.stagingBase;
    this.freeSlots = new Int32Array(config.staging);
    // Handed out lowest first: the slots in use stay few and close together.
    for (let i = 0; i < config.staging; i++) this.freeSlots[i] = config.staging - 1 - i;
    this.freeCount = config.staging;

    this.recvWord = c.OP_RECV | (c.SQE_BUFFER_SELECT << 8) | (c.RECV_MULTISHOT << 16);
    this.acceptWord = c.OP_ACCEPT | (c.ACCEPT_MULTISHOT << 16);
    this.sendFlags = c.MSG_NOSIGNAL | c.MSG_WAITALL;
    this.acceptFlags = c.SOCK_NONBLOCK | c.SOCK_CLOEXEC;
  }

  /** The io_uring setup flags in effect. */
  get setupFlags(): number {
    return this.handle.setupFlags;
  }

  /** Whether the addon's pump is running (it submits on its way out). */
  get pumping(): boolean {
    return this.control[1] !== 0;
  }

  /** SQEs written and not submitted yet. */
  get pending(): boolean {
    return this.tail !== Atomics.load(this.words, this.sqTailWord);
  }

  /**
   * Submits what is pending, runs completion work (one io_uring_enter) and hands what completed to the sink.
   * @throws Error (Node-style, `io_uring_enter`) when entering the ring failed (not for EBUSY: the CQ is full, reaped here).
   */
  submit(): void {
    const rc = this.handle.submit();
    this.stats.submits++;
    this.stats.completions += this.reap(this.sink);
    if (rc < 0 && rc !== Errno.EBUSY) throw errnoException(rc, "io_uring_enter");
  }

  /** @internal A batch from the addon's pump (`status` 0), or what failed there. */
  deliver(status: number, failed: string | undefined): void {
    if (failed !== undefined) {
      this.sink.failed(errnoException(status, failed, "(the ring's pump)"));
      return;
    }
    if (this.control.length === 0) {
      const error = new Error("io_uring: the ring's control block was detached (its ArrayBuffer was transferred); the ring is of no use");
      this.sink.failed(Object.assign(error, { code: "ERR_BOBBIN_DETACHED" }));
      return;
    }
    this.stats.batches++;
    this.stats.completions += this.reap(this.sink);
  }

  /**
   * Hands every completion waiting in the CQ ring to `sink`, in order, and
   * returns how many. They are copied out and the ring's head stored first,
   * so that the CQ is free again before the sink submits anything. A sink
   * that throws does not lose the rest: the first error is rethrown at the end.
   */
  reap(sink: CompletionSink): number {
    const words = this.words;
    let head = words[this.cqHeadWord]!;
    const tail = Atomics.load(words, this.cqTailWord);
    const n = (tail - head) >>> 0;
    if (n === 0) return 0;
    const cqes = this.cqes;
    const mask = this.cqMask;
    const batch = this.batch;
    for (let j = 0; j < n << 2; j += 4) {
      const i = (head & mask) << 2;
      batch[j] = cqes[i]!;
      batch[j + 1] = cqes[i + 1]!;
      batch[j + 2] = cqes[i + 2]!;
      batch[j + 3] = cqes[i + 3]!;
      head = (head + 1) >>> 0;
    }
    Atomics.store(words, this.cqHeadWord, head);
    let failure: unknown = null;
    for (let j = 0; j < n << 2; j += 4) {
      try {
        sink.complete(batch[j]!, batch[j + 1]!, batch[j + 2]!, batch[j + 3]!);
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== null) throw failure;
    return n;
  }

  /** A multishot recv into provided buffers. */
  recv(fd: number, tag: number): void {
    this.put(this.recvWord, fd, 0, 0, 0, 0, tag, this.constants.BUFFER_GROUP);
  }

  /** An accept, multishot or for one connection; the connections come non-blocking and close-on-exec. */
  accept(fd: number, tag: number, multishot: boolean): void {
    this.put(multishot ? this.acceptWord : this.constants.OP_ACCEPT, fd, 0, 0, 0, this.acceptFlags, tag, 0);
  }

  /** Sends `len` bytes of staging slot `slot` from `off`, all of them (MSG_WAITALL), never raising SIGPIPE. */
  send(fd: number, slot: number, off: number, len: number, tag: number): void {
    const address = this.stagingBase + slot * this.stagingSize + off;
    const hi = Math.floor(address / TWO_32);
    this.put(this.constants.OP_SEND, fd, address - hi * TWO_32, hi, len, this.sendFlags, tag, 0);
  }

  /** A one-shot poll for `events` (POLLIN, POLLOUT). */
  poll(fd: number, events: number, tag: number): void {
    this.put(this.constants.OP_POLL_ADD, fd, 0, 0, 0, events, tag, 0);
  }

  /** Cancels the request whose user data is (`fd`, `target`); its own completion carries `tag`. */
  cancel(fd: number, target: number, tag: number): void {
    this.put(this.constants.OP_ASYNC_CANCEL, -1, fd, target, 0, 0, tag, 0, fd);
  }

  /** Gives buffer `bid` back to the kernel. */
  giveBuffer(bid: number): void {
    const entry = this.bufferTail & this.bufferMask;
    const address = this.bufferAddress[bid]!;
    const hi = Math.floor(address / TWO_32);
    const w = entry << 2;
    this.bufferWords[w] = address - hi * TWO_32;
    this.bufferWords[w + 1] = hi;
    this.bufferWords[w + 2] = this.bufferSize;
    this.bufferHalves[(entry << 3) + 6] = bid; // not +7: entry 0's last half is the ring's tail
    this.bufferTail = (this.bufferTail + 1) & 0xffff;
    Atomics.store(this.bufferHalves, this.bufferTailHalf, this.bufferTail);
    this.buffersInRing++;
  }

  /** A free staging slot, or -1. */
  takeSlot(): number {
    return this.freeCount === 0 ? -1 : this.freeSlots[--this.freeCount]!;
  }

  freeSlot(slot: number): void {
    this.freeSlots[this.freeCount++] = slot;
  }

  /** Writes one SQE (zeroing what is not given) and advances the tail; submits first when the SQ is full. */
  private put(
    word: number,
    fd: number,
    addrLo: number,
    addrHi: number,
    len: number,
    opFlags: number,
    tag: number,
    group: number,
    dataFd = fd,
  ): void {
    if ((this.tail - Atomics.load(this.words, this.sqHeadWord)) >>> 0 >= this.sqEntries) {
      this.submit();
      if ((this.tail - Atomics.load(this.words, this.sqHeadWord)) >>> 0 >= this.sqEntries) {
        throw new Error("io_uring: the submission queue is full and the kernel takes nothing more until completions are reaped");
      }
    }
    const q = this.sqes;
    const i = (this.tail & this.sqMask) << 4;
    q[i] = word;
    q[i + 1] = fd;
    q[i + 2] = 0;
    q[i + 3] = 0;
    q[i + 4] = addrLo;
    q[i + 5] = addrHi;
    q[i + 6] = len;
    q[i + 7] = opFlags;
    q[i + 8] = dataFd;
    q[i + 9] = tag;
    q[i + 10] = group;
    q[i + 11] = 0;
    q[i + 12] = 0;
    q[i + 13] = 0;
    q[i + 14] = 0;
    q[i + 15] = 0;
    this.tail = (this.tail + 1) >>> 0;
    this.control[0] = this.tail | 0;
  }
}
