/**
 * Name lookups as an operation: `lookup(host)`, the system's resolver
 * (`getaddrinfo`, as `dns.lookup` and `connect` use it).
 */
import * as dns from "node:dns";
import * as B from "@bobbin/core";
import { describe } from "@bobbin/core/lowlevel";

/**
 * An address `lookup` found: `address` in Node's text form, and its family.
 *
 * @example
 * ```ts
 * const { address, family }: LookupAddress = yield* lookup("localhost");
 * ```
 */
export interface LookupAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/**
 * Options of {@link lookup}.
 *
 * @example
 * ```ts
 * yield* lookup("localhost", { family: 6 });
 * ```
 */
export interface LookupOptions {
  /** Only addresses of this family (default 0: either, in the order the system prefers). */
  readonly family?: 0 | 4 | 6 | undefined;
}

/**
 * Looks `host` up with the system's resolver (`getaddrinfo`, as
 * `dns.lookup` does: `/etc/hosts`, then DNS) and returns its first address.
 * Node cannot cancel a lookup: a cancelled task leaves at once and the answer
 * is dropped when it comes.
 *
 * @example
 * ```ts
 * import { run, lookup } from "@bobbin/unix";
 *
 * await run(function* () {
 *   const { address, family } = yield* lookup("localhost");
 *   console.log(address, family);    // 127.0.0.1 4 (or ::1 6)
 * });
 * ```
 * @throws the resolver's error (`ENOTFOUND` for an unknown name, `EAI_AGAIN`…), to this task only.
 * @throws TypeError when `host` is not a non-empty string; RangeError for a family other than 0, 4 or 6.
 * @throws Cancelled when the task is cancelled while the lookup runs.
 */
export function lookup(host: string, options: LookupOptions = {}): B.Operation<LookupAddress> {
  if (typeof host !== "string" || host.length === 0)
    throw new TypeError(`lookup(host) expects a host name (a non-empty string), got ${describe(host)}`);
  if (options === null || typeof options !== "object")
    throw new TypeError(`lookup(host, options) expects options { family }, got ${describe(options)}`);
  const family = options.family ?? 0;
  if (family !== 0 && family !== 4 && family !== 6)
    throw new RangeError(`lookup(host, { family }): family must be 0, 4 or 6, got ${describe(family)}`);
  return B.promise(async () => {
    const found = await dns.promises.lookup(host, { family });
    return { address: found.address, family: found.family as 4 | 6 };
  });
}
