/**
 * One failure's identity across domains. An error that crosses to another
 * domain is rebuilt there as a new object; the original and its copies share
 * an origin, made when it first crosses. A failure that reaches the run twice
 * (a worker's error, as the run's failure and as the outcome of the call it
 * ran) is then kept once, while two failures that only look alike (one line
 * that failed in two tasks) are both kept.
 */
import { threadId } from "node:worker_threads";

const origins = new WeakMap<object, string>();
let made = 0;

/** @internal The origin of `error`, made now if it never crossed (unique across the process's threads). */
export function originFor(error: object): string {
  let origin = origins.get(error);
  if (origin === undefined) {
    origin = `${threadId}.${++made}`;
    origins.set(error, origin);
  }
  return origin;
}

/** @internal `copy` was rebuilt from an error of `origin` that crossed from another domain. */
export function adoptOrigin(copy: object, origin: string): void {
  origins.set(copy, origin);
}

/** @internal Whether `a` and `b` are one failure: the same error, or copies of one that crossed domains. */
export function sameFailure(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || typeof a !== "object" || b === null || typeof b !== "object") return false;
  const origin = origins.get(a);
  return origin !== undefined && origin === origins.get(b);
}
