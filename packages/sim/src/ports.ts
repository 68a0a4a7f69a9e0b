/**
 * A host's namespace of bound addresses: TCP and UDP ports per family, and
 * Unix-socket paths. Binding follows the system's rules: an address and
 * port are taken once (a wildcard address takes the port on every address),
 * port 0 picks the next free ephemeral port (49152–65535, in order, so runs
 * are reproducible), and a Unix path is taken until its socket is closed.
 */
import { systemError } from "@bobbin/unix/backend";
import { type Family, isWildcard } from "./address.js";

const FIRST_EPHEMERAL = 49152;
const LAST_EPHEMERAL = 65535;

/** @internal TCP or UDP. */
export type Protocol = "tcp" | "udp";

/** @internal What holds a bound address. */
export interface Bound {
  readonly ip: string;
  readonly port: number;
}

/** @internal One host's bindings. */
export class Ports<S extends Bound> {
  /** `protocol/family/port` → the sockets bound to that port, by address. */
  private readonly byPort = new Map<string, S[]>();
  private readonly nextEphemeral = new Map<string, number>();
  /** Unix-socket paths and their listening sockets. */
  readonly paths = new Map<string, S>();

  /**
   * The port `sock` should bind: `port`, or the next free ephemeral one for 0.
   * @throws EADDRINUSE when the address and port are taken; EADDRNOTAVAIL when no ephemeral port is free.
   */
  choose(protocol: Protocol, family: Family, ip: string, port: number, syscall: string): number {
    if (port !== 0) {
      if (this.conflicts(protocol, family, ip, port)) {
        throw systemError("EADDRINUSE", syscall, `${ip}:${port} is already in use on this simulated host`);
      }
      return port;
    }
    const key = `${protocol}/${family}`;
    const start = this.nextEphemeral.get(key) ?? FIRST_EPHEMERAL;
    let candidate = start;
    do {
      const next = candidate === LAST_EPHEMERAL ? FIRST_EPHEMERAL : candidate + 1;
      if (!this.conflicts(protocol, family, ip, candidate)) {
        this.nextEphemeral.set(key, next);
        return candidate;
      }
      candidate = next;
    } while (candidate !== start);
    throw systemError("EADDRNOTAVAIL", syscall, "no ephemeral port is free on this simulated host");
  }

  /** Records `sock` (its `ip` and `port` set) as bound. */
  bind(protocol: Protocol, family: Family, sock: S): void {
    const key = `${protocol}/${family}/${sock.port}`;
    const list = this.byPort.get(key);
    if (list === undefined) this.byPort.set(key, [sock]);
    else list.push(sock);
  }

  /** Forgets `sock`'s binding. */
  unbind(protocol: Protocol, family: Family, sock: S): void {
    const key = `${protocol}/${family}/${sock.port}`;
    const list = this.byPort.get(key);
    if (list === undefined) return;
    const i = list.indexOf(sock);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.byPort.delete(key);
  }

  /** The socket bound to `ip:port` (or to the wildcard address and `port`). */
  find(protocol: Protocol, family: Family, ip: string, port: number): S | undefined {
    const list = this.byPort.get(`${protocol}/${family}/${port}`);
    if (list === undefined) return undefined;
    let wildcard: S | undefined;
    for (const sock of list) {
      if (sock.ip === ip) return sock;
      if (isWildcard(sock.ip)) wildcard = sock;
    }
    return wildcard;
  }

  /** Forgets every binding (the host crashed: its restart starts afresh). */
  clear(): void {
    this.byPort.clear();
    this.nextEphemeral.clear();
    this.paths.clear();
  }

  private conflicts(protocol: Protocol, family: Family, ip: string, port: number): boolean {
    const list = this.byPort.get(`${protocol}/${family}/${port}`);
    if (list === undefined) return false;
    return isWildcard(ip) || list.some((sock) => sock.ip === ip || isWildcard(sock.ip));
  }
}
