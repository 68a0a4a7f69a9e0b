/**
 * What fails under a raw-descriptor backend outside any operation: its
 * poller or its ring, in a Node callback.
 */

/**
 * @internal What failed under a backend outside any operation: its poller
 * or ring, in a Node callback (a failed `epoll_wait` or `io_uring_enter`,
 * libuv unable to poll, shared memory detached). Nothing there can throw to
 * a task, so the error is kept, a pending `select` is interrupted, and the
 * next `select` throws it: core then fails the run with it (a
 * `CallbackFailed` naming the backend's select, this error its cause).
 */
export class BackendFailure {
  private error: Error | null = null;

  constructor(private readonly interrupt: () => void) {}

  /** Keeps the first failure and has the next `select` come soon. */
  fail(error: Error): void {
    this.error ??= error;
    this.interrupt();
  }

  /** Throws the failure, if any (from `select`). */
  check(): void {
    if (this.error !== null) throw this.error;
  }
}
