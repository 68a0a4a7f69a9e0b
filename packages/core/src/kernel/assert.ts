/**
 * Development-only checks of the kernel's invariants. `__BOBBIN_DEV__` (see
 * `dev.d.ts`) is replaced at build time: `true` in test runs (vitest's
 * `define`), `false` in published builds (tsup's `define`), where every
 * `if (__BOBBIN_DEV__)` block is compiled out.
 */
import { InternalError } from "../errors.js";

/** @internal Fails loudly when an invariant does not hold (development builds only). */
export function invariant(holds: boolean, what: string): void {
  if (!holds) throw new InternalError(new Error(`invariant broken: ${what}`));
}
