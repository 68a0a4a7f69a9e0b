/**
 * Addresses in the simulated network: each host has an IPv4 address
 * (10.0.0.1, 10.0.0.2… in the order hosts are declared), an IPv6 address
 * (fd00::1, fd00::2…) and its own loopback (127.0.0.0/8, ::1); its name
 * resolves to its address, `localhost` to the loopback.
 */
import { isIP } from "node:net";

/** @internal The two families of the simulated network. */
export type Family = 4 | 6;

/** @internal The IPv4 address of the host declared `index`-th (from 1). */
export function ipv4Of(index: number): string {
  return `10.${(index >>> 16) & 255}.${(index >>> 8) & 255}.${index & 255}`;
}

/** @internal The IPv6 address of the host declared `index`-th (from 1). */
export function ipv6Of(index: number): string {
  return `fd00::${index.toString(16)}`;
}

/** @internal The loopback address of `family`. */
export function loopbackOf(family: Family): string {
  return family === 4 ? "127.0.0.1" : "::1";
}

/** @internal The wildcard ("any") address of `family`. */
export function wildcardOf(family: Family): string {
  return family === 4 ? "0.0.0.0" : "::";
}

/** @internal Whether `ip` is a loopback address. */
export function isLoopback(ip: string): boolean {
  return ip === "::1" || ip.startsWith("127.");
}

/** @internal Whether `ip` is the wildcard address. */
export function isWildcard(ip: string): boolean {
  return ip === "0.0.0.0" || ip === "::";
}

/** @internal Whether `host` is an IP literal rather than a name. */
export function isLiteral(host: string): boolean {
  return isIP(host) !== 0;
}
