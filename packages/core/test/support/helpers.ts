/** Shared helpers of the core tests. */
import * as B from "../../src/index.js";
import * as L from "../../src/lowlevel/index.js";

/** Sleeps with a Node timer, cancellable through the task's AbortSignal. */
export function sleepMs(ms: number): B.Operation<void> {
  return B.promise(
    (signal) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
      }),
  );
}

/** Runs `main` (with the seams `options` may set) and returns how the run settled, never throwing. */
export async function settle<T>(main: B.TaskBody<[], T>, options?: L.KernelRunOptions): Promise<B.Result<T>> {
  try {
    return { ok: true, value: await L.runKernel(main, options) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Runs `op` as the root task's whole work and returns how `run` settled, never throwing. */
export function settleOperation<T>(op: B.Operation<T>, options?: L.KernelRunOptions): Promise<B.Result<T>> {
  return settle(function* () {
    return yield* op;
  }, options);
}

/** The error of a failed result, or a test failure (the workspace's, shared by every package's tests). */
export { errorOf } from "@bobbin/test-support";

/**
 * Parks until cancelled. Logs "<name> waits" when it parks and "<name> cleaned"
 * once cancelled, after one more suspension (to show that cleanup which
 * suspends is awaited).
 */
export function* parked(log: string[], name: string): Generator<B.Instruction, never, unknown> {
  log.push(`${name} waits`);
  try {
    yield* new L.Trigger().wait();
    throw new Error("unreachable: nobody signals this trigger");
  } finally {
    yield* B.yieldNow();
    log.push(`${name} cleaned`);
  }
}

/** A log without the "waits" lines of {@link parked}. */
export function cleanups(log: string[]): string[] {
  return log.filter((line) => !line.endsWith(" waits"));
}

/** Runs `op` and returns what it threw; fails the test when it throws nothing. */
export function* caught(op: B.Operation<unknown>): Generator<B.Instruction, unknown, unknown> {
  try {
    yield* op;
  } catch (error) {
    return error;
  }
  throw new Error("expected the operation to throw");
}

/** Yields `n` times. */
export function* yieldTimes(n: number): Generator<B.Instruction, void, unknown> {
  for (let i = 0; i < n; i++) yield* B.yieldNow();
}

/** An events backend whose readiness is driven by the test. */
export class ManualEvents implements L.Events {
  readonly selects: { block: boolean; cancelled: number[] }[] = [];
  readonly ready: L.Syscall[] = [];
  interrupts = 0;
  finalised = 0;
  /** Optional reaction to a blocking select (for example, making a syscall ready). */
  onBlock: (() => void) | null = null;

  select(block: boolean, cancelled: readonly number[]): L.Signal[] {
    this.selects.push({ block, cancelled: [...cancelled] });
    if (block && this.ready.length === 0) this.onBlock?.();
    return this.ready.splice(0).map((s) => L.signal(s));
  }

  interrupt(): void {
    this.interrupts++;
  }

  finaliser(): void {
    this.finalised++;
  }
}

/** An events backend driven by Node's loop: `select` returns a Promise the test (or `interrupt`) settles. */
export class PromiseEvents implements L.Events {
  interrupts = 0;
  /** Runs at every select, before it answers. */
  onSelect: ((block: boolean) => void) | null = null;
  private waiting: ((signals: L.Signal[]) => void) | null = null;

  /** With `nonBlocking`, a non-blocking select also waits (a Promise) instead of answering `[]`. */
  constructor(private readonly nonBlocking = false) {}

  select(block: boolean): L.Signal[] | Promise<L.Signal[]> {
    this.onSelect?.(block);
    if (!block && !this.nonBlocking) return [];
    return new Promise<L.Signal[]>((resolve) => (this.waiting = resolve));
  }

  interrupt(): void {
    this.interrupts++;
    this.release([]);
  }

  /** Settles the pending select with `signals`. */
  release(signals: L.Signal[]): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.(signals);
  }
}

/** An operation that breaks the kernel's protocol: it parks its task through a trigger, then throws instead of suspending. */
export const protocolBreaker: B.Operation<void> = {
  [Symbol.iterator]() {
    return {
      next() {
        new L.Trigger().wait()[Symbol.iterator]().next();
        throw new Error("not suspended after all");
      },
    };
  },
};
