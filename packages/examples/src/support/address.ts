/**
 * Printing socket addresses (the book's `pp_sockaddr`).
 */
import type { Address } from "@bobbin/unix";

/**
 * `host:port` for an Internet address (`[host]:port` for IPv6), the path for a Unix one.
 *
 * @example
 * ```ts
 * formatAddress({ host: "127.0.0.1", port: 3000 });   // "127.0.0.1:3000"
 * ```
 */
export function formatAddress(address: Address): string {
  if ("path" in address) return address.path;
  return address.host.includes(":") ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
