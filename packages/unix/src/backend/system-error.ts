/**
 * Node-style system errors for backends: what a failed system call throws
 * (`code`, `syscall`, `errno`), for the failures a backend detects itself.
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
  const errno = ERRNO[code];
  if (errno !== undefined) error.errno = -errno;
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
