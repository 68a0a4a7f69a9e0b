/**
 * What a server holds for its clients, bounded: at most `maxClients`
 * connections at once, and none that stays silent longer than
 * `idleSeconds`. Without bounds, connections that send nothing (a hundred
 * idle ones, or a slow-loris attack) take every file descriptor the process
 * has and lock real clients out. At the cap a new client is still accepted:
 * the client silent the longest makes room for it, so a real client is
 * always served.
 */
import { readFileSync } from "node:fs";
import type * as B from "@bobbin/core";
import { Timeout, withTimeout } from "@bobbin/unix";
import { openFds } from "./fds.js";

/** How many connections a server holds, and how long one may stay silent. */
export interface ClientLimits {
  /** The most clients served at once; at the cap, a new client replaces the one silent the longest. */
  readonly maxClients: number;
  /** Seconds a client may send nothing before it is let go. */
  readonly idleSeconds: number;
}

/** The default idle timeout, in seconds. */
export const IDLE_SECONDS = 120;
/** The most clients a server holds by default, whatever the descriptors allow. */
const MAX_CLIENTS = 1024;
/** Descriptors kept free for the process itself (a worker domain's loop, a log file…). */
const RESERVE = 8;

/** The soft limit on this process's descriptors (Linux's /proc/self/limits), or null where unknown. */
function descriptorLimit(): number | null {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    return Number.isInteger(soft) && soft > 0 ? soft : null;
  } catch {
    return null;
  }
}

/**
 * The default `maxClients` for `servers` servers of this process (one per
 * domain): half of the descriptors still free, shared between them (a
 * client's descriptor, and one for the newcomer that replaces it), at most
 * 1024 each.
 *
 * @example
 * ```ts
 * defaultMaxClients(1);   // 22 under `ulimit -n 64` with 20 descriptors open
 * ```
 */
export function defaultMaxClients(servers: number): number {
  const limit = descriptorLimit();
  const open = openFds();
  if (limit === null || open === null) return MAX_CLIENTS;
  const free = Math.max(0, limit - open - RESERVE);
  return Math.max(1, Math.min(MAX_CLIENTS, Math.floor(free / 2 / Math.max(1, servers))));
}

/**
 * The `--max-clients` and `--idle-timeout` options of a server program,
 * checked; `servers` is how many servers (domains) share the process.
 *
 * @example
 * ```ts
 * const limits = clientLimitsArgs(values, 1);   // { maxClients: 22, idleSeconds: 120 }
 * ```
 * @throws RangeError for a value that is not a positive integer (clients) or a positive number (seconds).
 */
export function clientLimitsArgs(values: Record<string, unknown>, servers: number): ClientLimits {
  const max =
    values["max-clients"] === "auto" || values["max-clients"] === undefined ? defaultMaxClients(servers) : Number(values["max-clients"]);
  if (!Number.isInteger(max) || max < 1) {
    throw new RangeError(`--max-clients must be auto or an integer ≥ 1 (connections served at once), got ${String(values["max-clients"])}`);
  }
  const idle = values["idle-timeout"] === undefined ? IDLE_SECONDS : Number(values["idle-timeout"]);
  if (!(idle > 0) || !Number.isFinite(idle)) {
    throw new RangeError(`--idle-timeout must be a number of seconds > 0, got ${String(values["idle-timeout"])}`);
  }
  return { maxClients: max, idleSeconds: idle };
}

/** The options `clientLimitsArgs` reads, for `serverProgram`. */
export const CLIENT_LIMIT_OPTIONS = {
  "max-clients": { type: "string", default: "auto" },
  "idle-timeout": { type: "string", default: String(IDLE_SECONDS) },
} as const;

/** One client of a {@link Clients} table: its socket, and when it was last heard from. */
export class Client {
  /** When the client last sent something (`performance.now()`). */
  heardAt = performance.now();
  /** Let go to make room for a newer client: its socket was closed under its task. */
  evicted = false;

  constructor(
    private readonly table: Clients,
    /** What is closed to let the client go (its operations then fail with `SocketClosed`). */
    private readonly socket: Disposable,
  ) {}

  /** @internal Lets the client go: closes its socket (its task sees `SocketClosed` and ends). */
  evict(): void {
    this.evicted = true;
    this.socket[Symbol.dispose]();
  }

  /**
   * Reads with the table's idle timeout: `op`'s result, after which the
   * client counts as heard from now.
   *
   * @example
   * ```ts
   * const n = yield* me.heard(read(sock, buf));
   * ```
   * @throws ClientIdle when `op` did not finish within the idle timeout; what `op` throws.
   */
  *heard<T>(op: B.Operation<T>): Generator<B.Instruction, T, unknown> {
    const seconds = this.table.limits.idleSeconds;
    let value: T;
    try {
      value = yield* withTimeout(seconds, op);
    } catch (error) {
      if (error instanceof Timeout) throw new ClientIdle(seconds);
      throw error;
    }
    this.heardAt = performance.now();
    return value;
  }

  /** The client is gone (its task ends): it leaves the table. */
  leave(): void {
    this.table.remove(this);
  }
}

/** A client sent nothing for the idle timeout: it is let go. */
export class ClientIdle extends Error {
  override readonly name = "ClientIdle";

  constructor(readonly seconds: number) {
    super(`nothing received for ${seconds} s`);
  }
}

/**
 * The clients a server holds, at most `limits.maxClients`.
 *
 * @example
 * ```ts
 * const clients = new Clients({ maxClients: 100, idleSeconds: 60 });
 * const [sock] = yield* accept(server);
 * clients.makeRoom();
 * B.spawn(serve, sock, clients.add(sock));
 * ```
 */
export class Clients {
  private readonly held = new Set<Client>();
  /** Clients let go to make room for newer ones. */
  evictions = 0;

  constructor(readonly limits: ClientLimits) {}

  get size(): number {
    return this.held.size;
  }

  /** A new client on `socket`, in the table until its `leave`. */
  add(socket: Disposable): Client {
    const c = new Client(this, socket);
    this.held.add(c);
    return c;
  }

  /** @internal */
  remove(c: Client): void {
    this.held.delete(c);
  }

  /**
   * Makes room for one more client: while the table is full, the client
   * heard from the longest ago is let go (its socket closed: its task sees
   * `SocketClosed`, and ends as if the client had left).
   *
   * @example
   * ```ts
   * clients.makeRoom();
   * ```
   */
  makeRoom(): void {
    while (this.held.size >= this.limits.maxClients) {
      let idlest: Client | null = null;
      for (const c of this.held) if (idlest === null || c.heardAt < idlest.heardAt) idlest = c;
      this.held.delete(idlest!);
      this.evictions++;
      idlest!.evict();
    }
  }
}
