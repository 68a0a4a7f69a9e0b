/** The io_uring backend as programs see it: its options, and what it has beyond the contract. */
import type { Backend } from "@bobbin/unix";

/**
 * Options of `uringBackend`.
 *
 * @example
 * ```ts
 * export const big = defineBackend(import.meta.url, "big", () => uringBackend({ buffers: 2048, bufferSize: 4096 }));
 * ```
 * @throws never (a type; `uringBackend` validates it).
 */
export interface UringBackendOptions {
  /** Submission queue entries (the completion queue has four times as many). Default 1024. */
  readonly entries?: number | undefined;
  /** Provided buffers the kernel receives into, shared by every connection: a power of two ≤ 32768. Default 512. */
  readonly buffers?: number | undefined;
  /** Bytes per provided buffer. Default 16384. */
  readonly bufferSize?: number | undefined;
  /** Staging slots that sends point at, shared by every connection. Default 256. */
  readonly staging?: number | undefined;
  /** Bytes per staging slot: the largest piece of a write sent at once. Default 16384. */
  readonly stagingSize?: number | undefined;
  /**
   * Bytes a connection may receive ahead of `read` before its recv is
   * cancelled, until `read` has taken half of them; what arrives before the
   * cancellation lands is kept too (a multishot recv fills up to 32 buffers
   * per run of completion work). Default 4 × `bufferSize`.
   */
  readonly readAhead?: number | undefined;
  /**
   * How the kernel runs completion work: `"defer"` (IORING_SETUP_DEFER_TASKRUN
   * + SINGLE_ISSUER: only when the ring is entered), `"coop"`
   * (COOP_TASKRUN: at the next system call, without interrupting), `"signal"`
   * (neither: the kernel interrupts the thread), `"auto"` (default: `"defer"`
   * where the kernel has it, Linux 6.1, else `"coop"`).
   */
  readonly taskRun?: "auto" | "defer" | "coop" | "signal" | undefined;
  /** Enter the ring when the run queue empties, before waiting in Node's loop (see the README's "The io_uring backend"). Default `true`. */
  readonly eagerPoll?: boolean | undefined;
}

/**
 * The io_uring backend, as `uringBackend` makes it: a `Backend` with its
 * counters.
 *
 * @example
 * ```ts
 * let backend!: UringBackend;
 * await run(main, { backend: () => (backend = uringBackend()) });
 * console.log(backend.stats.completions);
 * ```
 * @throws never (a type).
 */
export interface UringBackend extends Backend {
  /**
   * Counters for tuning: batches of completions delivered by Node's loop,
   * ring entries made by `select` itself, and the completions reaped.
   */
  readonly stats: { readonly batches: number; readonly submits: number; readonly completions: number };
}
