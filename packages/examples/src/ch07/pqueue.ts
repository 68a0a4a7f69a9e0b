/**
 * A priority queue (a binary min-heap): the book's `Miou.Pqueue.Make`.
 */

/**
 * A min-heap ordered by `compare`: `findMin` is O(1), `insert` and
 * `deleteMin` are O(log n). Only the smallest element can be removed, which
 * is why the book marks cancelled sleepers instead of deleting them.
 *
 * @example
 * ```ts
 * const q = new Pqueue<number>((a, b) => a - b);
 * q.insert(3); q.insert(1);
 * q.findMin();   // 1
 * q.deleteMin();
 * q.findMin();   // 3
 * ```
 */
export class Pqueue<T> {
  private readonly heap: T[] = [];

  constructor(private readonly compare: (a: T, b: T) => number) {}

  /** How many elements the queue holds. */
  get size(): number {
    return this.heap.length;
  }

  /** Adds an element. */
  insert(x: T): void {
    const heap = this.heap;
    let i = heap.push(x) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.compare(heap[parent]!, x) <= 0) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = x;
  }

  /** The smallest element, or `undefined` when empty (the book's `find_min`). */
  findMin(): T | undefined {
    return this.heap[0];
  }

  /**
   * Removes the smallest element (the book's `delete_min_exn`).
   * @throws RangeError when the queue is empty.
   */
  deleteMin(): void {
    const heap = this.heap;
    if (heap.length === 0) throw new RangeError("Pqueue.deleteMin: the queue is empty");
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= heap.length) break;
      const r = l + 1;
      const c = r < heap.length && this.compare(heap[r]!, heap[l]!) < 0 ? r : l;
      if (this.compare(last, heap[c]!) <= 0) break;
      heap[i] = heap[c]!;
      i = c;
    }
    heap[i] = last;
  }

  /** Calls `f` on every element, in no particular order (the book's `iter`). */
  iter(f: (x: T) => void): void {
    for (const x of this.heap) f(x);
  }
}
