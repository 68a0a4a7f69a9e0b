/**
 * Development-only checks of the kernel's invariants. `__BOBBIN_DEV__` (see
 * `dev.d.ts`) is replaced at build time: `true` in test runs (vitest's
 * `define`) and in the development build (`dist-dev/`, which the tests of
 * worker domains load), `false` in published builds (tsup's `define`), where
 * every `if (__BOBBIN_DEV__)` block is compiled out. Checks are written
 * `if (__BOBBIN_DEV__ && !holds) broken(…)`, so that their message is made
 * only when one fails.
 */
import { InternalError } from "../errors.js";

/** @internal An invariant about `subject` (a task, a kernel) does not hold: fails loudly. */
export function broken(subject: { toString(): string }, what: string): never {
  throw new InternalError(new Error(`invariant broken: ${subject} ${what}`));
}
