/**
 * `systemError`: the errors a backend makes for the system failures it
 * detects itself. Apart from errors.ts (the errors a program catches) so that
 * a program's declarations never reach it.
 */

/**
 * Makes an error shaped like Node's system errors (`code`, `syscall`,
 * `errno`), for conditions a backend detects itself (e.g. `EAFNOSUPPORT`,
 * `EISCONN`, `EPIPE` after a shutdown).
 *
 * @example
 * ```ts
 * throw systemError("EPIPE", "write", "the socket was shut down for sending");
 * ```
 * @throws never (it returns the error).
 */
export function systemError(code: string, syscall: string, message: string): NodeJS.ErrnoException {
  const error = new Error(`${syscall} ${code}: ${message}`) as NodeJS.ErrnoException;
  error.code = code;
  error.syscall = syscall;
  if (Object.hasOwn(ERRNO, code)) error.errno = -ERRNO[code]!;
  return error;
}

const ERRNO: Record<string, number> = {
  EPIPE: 32,
  EISCONN: 106,
  ENOTCONN: 107,
  EAFNOSUPPORT: 97,
  EINVAL: 22,
  EBADF: 9,
  ETIMEDOUT: 110,
};
