/** System errors in Node's shape, from the negative errno results of the raw system calls. */
import { getSystemErrorName } from "node:util";
import { describe } from "@bobbin/core/lowlevel";

/**
 * The name of a negative errno result, as Node writes it (`-11` → `"EAGAIN"`).
 *
 * @example
 * ```ts
 * const n = syscalls.read(fd, buf);
 * if (n < 0) console.log(errnoName(n));   // "EAGAIN"
 * ```
 * @throws RangeError when `rc` is not a negative integer.
 */
export function errnoName(rc: number): string {
  if (!Number.isInteger(rc) || rc >= 0) throw new RangeError(`errnoName(rc): rc must be a negative errno, got ${describe(rc)}`);
  try {
    return getSystemErrorName(rc);
  } catch {
    return `Unknown system error ${rc}`;
  }
}

/**
 * A Node-style system error for a negative errno result: message
 * `"<syscall> <CODE>"`, `code`, `errno` (negative, as in Node) and `syscall`.
 *
 * @example
 * ```ts
 * const fd = syscalls.socket("tcp4");
 * if (fd < 0) throw errnoException(fd, "socket");
 * ```
 * @throws RangeError when `rc` is not a negative integer (it returns the error otherwise).
 */
export function errnoException(rc: number, syscall: string, detail?: string): NodeJS.ErrnoException {
  const code = errnoName(rc);
  const error = new Error(detail === undefined ? `${syscall} ${code}` : `${syscall} ${code} ${detail}`) as NodeJS.ErrnoException;
  error.code = code;
  error.errno = rc;
  error.syscall = syscall;
  return error;
}

/**
 * Returns `rc` when it is ≥ 0, throws the Node-style error otherwise (the
 * raw system calls return a negative errno instead of throwing).
 *
 * @example
 * ```ts
 * const fd = checkErrno(syscalls.socket("tcp4"), "socket");
 * ```
 * @throws Error (with `code`, `errno`, `syscall`) when `rc` < 0.
 */
export function checkErrno(rc: number, syscall: string): number {
  if (rc < 0) throw errnoException(rc, syscall);
  return rc;
}
