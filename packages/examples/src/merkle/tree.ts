/**
 * A Merkle tree over generated data: the pure, CPU-bound part of the
 * parallel hash (no scheduler here).
 *
 * Leaves are `leafSize` bytes each, generated from their index (so any
 * domain can make any leaf without receiving it). A leaf hashes to
 * `SHA-256(0x00 ‖ data)`, a node to `SHA-256(0x01 ‖ left ‖ right)` (the
 * prefixes keep leaves and nodes apart, as in RFC 6962).
 */
import { createHash } from "node:crypto";

/** A range of leaves: `count` (a power of two) leaves from `from`. */
export interface Range {
  readonly from: number;
  readonly count: number;
  readonly leafSize: number;
}

const LEAF = Buffer.of(0);
const NODE = Buffer.of(1);

/** Whether `n` is a power of two (1, 2, 4, …). */
export const isPowerOfTwo = (n: number): boolean => Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;

/**
 * The data of leaf `index`: `size` bytes from a xorshift generator seeded by the index.
 *
 * @example
 * ```ts
 * leafData(0, 1024).length;   // 1024
 * ```
 */
export function leafData(index: number, size: number): Buffer {
  const data = Buffer.allocUnsafe(size);
  let x = (index + 1) * 0x9e3779b1;
  x = x >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    data[i] = x & 0xff;
  }
  return data;
}

/** The hash of a leaf's data. */
export function hashLeaf(data: Uint8Array): Buffer {
  return createHash("sha256").update(LEAF).update(data).digest();
}

/** The hash of a node from its children's. */
export function hashNode(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash("sha256").update(NODE).update(left).update(right).digest();
}

/**
 * Combines a level of hashes (a power of two of them) up to their root.
 *
 * @example
 * ```ts
 * combine([a, b, c, d]);   // hashNode(hashNode(a, b), hashNode(c, d))
 * ```
 * @throws RangeError when the number of hashes is not a power of two.
 */
export function combine(level: readonly Uint8Array[]): Buffer {
  if (!isPowerOfTwo(level.length)) throw new RangeError(`combine: ${level.length} hashes is not a power of two`);
  let hashes = level as Uint8Array[];
  while (hashes.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < hashes.length; i += 2) next.push(hashNode(hashes[i]!, hashes[i + 1]!));
    hashes = next;
  }
  return Buffer.from(hashes[0]!);
}

/**
 * The root of the subtree over `range`: generates and hashes its leaves,
 * then combines them.
 *
 * @example
 * ```ts
 * rootOf({ from: 0, count: 1024, leafSize: 1024 }).toString("hex");
 * ```
 * @throws RangeError when `count` is not a power of two.
 */
export function rootOf(range: Range): Buffer {
  if (!isPowerOfTwo(range.count)) throw new RangeError(`rootOf: ${range.count} leaves is not a power of two`);
  const leaves: Buffer[] = [];
  for (let i = 0; i < range.count; i++) leaves.push(hashLeaf(leafData(range.from + i, range.leafSize)));
  return combine(leaves);
}

/**
 * Splits `leaves` leaves into `parts` equal subtrees (both powers of two).
 *
 * @example
 * ```ts
 * split(1024, 4, 64);   // [{ from: 0, count: 256, leafSize: 64 }, { from: 256, … }, …]
 * ```
 * @throws RangeError when `leaves` or `parts` is not a power of two, or `parts > leaves`.
 */
export function split(leaves: number, parts: number, leafSize: number): Range[] {
  if (!isPowerOfTwo(leaves) || !isPowerOfTwo(parts) || parts > leaves) {
    throw new RangeError(`split: ${leaves} leaves into ${parts} parts (both powers of two, parts ≤ leaves)`);
  }
  const count = leaves / parts;
  return Array.from({ length: parts }, (_, i) => ({ from: i * count, count, leafSize }));
}
