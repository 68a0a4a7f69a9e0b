/** The largest chunk: a queue's chunks double in size from its first one up to this many items. */
const MAX_CHUNK = 1024;

/**
 * @internal A FIFO on chunks, each linked to the next through its last slot:
 * push and shift are O(1) and never copy what is queued. A burst (a hundred
 * thousand tasks spawned at once) takes as many chunks as it needs, and each
 * is dropped once drained, so that what the burst left (its tasks, once
 * parked) is not charged for it; one drained chunk is kept for the next, so
 * a queue that crosses a chunk's end over and over allocates nothing. Chunks
 * stay small: a burst's tasks, young, go into young chunks, where one large
 * array grown by copying would be old, and every store of a young task into
 * it a remembered-set entry the scavenger walks. A queue that never holds
 * many (most parents' lists of children) keeps its small first chunk.
 */
export class RunQueue<T extends NonNullable<unknown>> {
  /** The chunk the oldest item is in, and its index there. */
  private headChunk: unknown[];
  private head = 0;
  /** The chunk the next item goes into, and its index there (never the link's: a full chunk gets its successor at once). */
  private tailChunk: unknown[];
  private tail = 0;
  /**
   * How many items the chunks from the head's up to the tail's (excluded)
   * hold when full: the size is this plus `tail - head`, changed only when a
   * chunk is linked or left, so that a push and a shift keep no count.
   */
  private between = 0;
  /** A drained chunk, all its slots empty, for the next chunk the tail needs. */
  private spare: unknown[] | null = null;

  /** `firstChunk`: how many items the first chunk holds (at most `MAX_CHUNK`). */
  constructor(firstChunk = 64) {
    this.headChunk = this.tailChunk = newChunk(Math.min(firstChunk, MAX_CHUNK));
  }

  get size(): number {
    return this.between + this.tail - this.head;
  }

  isEmpty(): boolean {
    return this.headChunk[this.head] === undefined;
  }

  push(item: T): void {
    const chunk = this.tailChunk;
    const tail = this.tail;
    chunk[tail] = item;
    // A chunk's last slot is its link.
    if (tail + 2 !== chunk.length) this.tail = tail + 1;
    else this.linkChunk(chunk);
  }

  /** The oldest item, or `undefined` when the queue is empty (its head's slot is then empty: no item is `undefined`). */
  shift(): T | undefined {
    const chunk = this.headChunk;
    const head = this.head;
    const item = chunk[head] as T | undefined;
    if (item === undefined) return undefined;
    chunk[head] = undefined;
    if (head + 2 !== chunk.length) this.head = head + 1;
    else this.leaveChunk(chunk);
    return item;
  }

  /** The items, oldest first (a copy). */
  items(): T[] {
    const out: T[] = [];
    let chunk = this.headChunk;
    let i = this.head;
    for (let n = this.size; n > 0; n--) {
      out.push(chunk[i] as T);
      if (++i === chunk.length - 1) {
        chunk = chunk[i] as unknown[];
        i = 0;
      }
    }
    return out;
  }

  /** The tail's chunk is full: the next one (the spare, or a new one twice as large) follows it. */
  private linkChunk(full: unknown[]): void {
    const link = full.length - 1;
    const next = this.spare ?? newChunk(Math.min(link * 2, MAX_CHUNK));
    this.spare = null;
    full[link] = next;
    this.tailChunk = next;
    this.tail = 0;
    this.between += link;
  }

  /** The head's chunk is drained: the head moves to the next one, and the drained one becomes the spare. */
  private leaveChunk(drained: unknown[]): void {
    const link = drained.length - 1;
    this.headChunk = drained[link] as unknown[];
    this.head = 0;
    drained[link] = undefined;
    this.spare = drained;
    this.between -= link;
  }
}

/**
 * A chunk of `capacity` items and its link, every slot `undefined` rather
 * than a hole: the queue reads an empty slot as its end, and chunks keep one
 * elements kind from the start, so that the loop's push and shift see one map.
 */
function newChunk(capacity: number): unknown[] {
  return new Array<unknown>(capacity + 1).fill(undefined);
}
