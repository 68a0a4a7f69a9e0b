/**
 * A server out of file descriptors: `accept` fails with `EMFILE` (or the
 * system is out of them, or of memory) while clients are still connecting.
 * That is a reason to wait and accept again, not to stop: the connections
 * wait in the kernel's queue meanwhile (a backend that accepts on its own,
 * such as libuv, may close some of them instead).
 */
import type * as B from "@bobbin/core";
import { sleep } from "@bobbin/unix";

/**
 * Whether `error` says the process (or the system) has no file descriptor,
 * or no memory, left for a new connection (`EMFILE`, `ENFILE`, `ENOBUFS`,
 * `ENOMEM`).
 *
 * @example
 * ```ts
 * if (!outOfDescriptors(error)) throw error;
 * ```
 * @throws never.
 */
export function outOfDescriptors(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "EMFILE" || code === "ENFILE" || code === "ENOBUFS" || code === "ENOMEM";
}

/** The first pause of a server out of descriptors, in seconds; it doubles up to the longest. */
const FIRST_PAUSE = 0.005;
const LONGEST_PAUSE = 0.1;

/**
 * Runs `accept` until it does not fail for want of descriptors: pauses of
 * 5 ms doubling up to 0.1 s, until clients have left. `onShortage` hears the
 * error's code once per shortage.
 *
 * @example
 * ```ts
 * const [client, peer] = yield* acceptWhenPossible(() => accept(server), (code) => console.log(`out of descriptors (${code})`));
 * ```
 * @throws the other errors of `accept`; what `onShortage` throws.
 */
export function* acceptWhenPossible<T>(
  accept: () => B.Operation<T>,
  onShortage: (code: string) => B.Operation<void> | void,
): Generator<B.Instruction, T, unknown> {
  for (let pause = FIRST_PAUSE; ; pause = Math.min(2 * pause, LONGEST_PAUSE)) {
    try {
      return yield* accept();
    } catch (error) {
      if (!outOfDescriptors(error)) throw error;
      if (pause === FIRST_PAUSE) {
        const said = onShortage((error as { code: string }).code);
        if (said !== undefined) yield* said;
      }
      yield* sleep(pause);
    }
  }
}
