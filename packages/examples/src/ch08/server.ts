/**
 * Chapter 8, "Conditions & Mutexes": the final echo server, one per domain,
 * all accepting on the listening socket dom0 bound. Output goes through a
 * mutex shared by every domain; each server waits for a client or for the
 * stop condition (`acceptOrDie`), whichever comes first; on SIGINT every
 * server stops accepting, waits for its clients to leave, and its sockets are
 * released.
 *
 * The sockets are owned (`OwnedSockets`): the listening socket is given to the
 * accepting task, which transfers it back to its parent with the new client;
 * when the stop wins instead, `awaitFirst` cancels the accepting task and the
 * finaliser of the listening socket closes it (this domain's descriptor of
 * it: the other domains close theirs).
 *
 * Three departures from the book: a server out of file descriptors (`EMFILE`)
 * does not stop; it waits and accepts again (`acceptWhenPossible` in
 * support/descriptors.ts). Its clients are bounded (support/clients.ts):
 * at most `limits.maxClients` per server, the one silent the longest making
 * room for a new one at the cap, and none silent for more than
 * `limits.idleSeconds`, so that idle connections cannot take every
 * descriptor and lock real clients out. And each "new client" line names
 * the domain that accepted it, so that the output shows every domain serving.
 */
import * as B from "@bobbin/core";
import { type Mutex, Ownership as Owner, type Semaphore } from "@bobbin/sync";
import { type Address, type OwnedSocket, OwnedSockets } from "@bobbin/unix";
import { cleanUp } from "../ch06/echo.js";
import { formatAddress } from "../support/address.js";
import { type Client, ClientIdle, type ClientLimits, Clients, IDLE_SECONDS } from "../support/clients.js";
import { acceptWhenPossible } from "../support/descriptors.js";
import { peerGone } from "../support/peer.js";
import { type Shutdown, stop, untilStop } from "./shutdown.js";

/** What a server did, to report when it stops. */
export interface Stats {
  /** The domain it ran on. */
  domain: number;
  connections: number;
  bytes: number;
}

/**
 * What every domain's server shares (the book's globals): the stop condition
 * and the output's mutex, both `@bobbin/sync` shared primitives. A plain
 * object, so that it crosses to worker domains as it is.
 */
export interface ServerContext {
  readonly shutdown: Shutdown;
  /** The book's `mutex_out`: one writer at a time, over every domain (`Mutex.shared()`). */
  readonly out: Mutex;
  /** Released once by each server as it starts accepting (`Semaphore.shared(0)`), so that dom0 can say when every domain serves. */
  readonly ready?: Semaphore;
  /** Print "new client: … (domain n)" for each client. Default true. */
  readonly verbose?: boolean;
  /** Each server's bounds on its clients. Default: 1024 clients, 120 s of silence. */
  readonly limits?: ClientLimits;
}

const LIMITS: ClientLimits = { maxClients: 1024, idleSeconds: IDLE_SECONDS };

/**
 * The book's `printf`: prints a line holding `out` (the book's `mutex_out`).
 *
 * @example
 * ```ts
 * yield* printf(ctx.out, `new client: ${formatAddress(peer)}`);
 * ```
 */
export function printf(out: Mutex, line: string): B.Operation<void> {
  return out.protect(() => {
    process.stdout.write(`${line}\n`);
  });
}

/**
 * The book's final `echo`, counting the bytes it echoed into `stats`. Two
 * departures: a client that resets its connection is gone, not an error
 * (the book's server would stop at the first `ECONNRESET`, raised by
 * `clean_up`); and one silent for the idle timeout is let go (each read
 * through `seat.heard`).
 *
 * @example
 * ```ts
 * B.spawn({ orphans, give: [client] }, echo, client, stats, clients.add(client.value));
 * ```
 */
export function* echo(client: OwnedSocket, stats: Stats, seat: Client): Generator<B.Instruction, void, unknown> {
  const buf = Buffer.alloc(0x100);
  try {
    const read = () => seat.heard(OwnedSockets.read(client, buf));
    for (let len = yield* read(); len > 0; len = yield* read()) {
      yield* OwnedSockets.write(client, buf, 0, len);
      stats.bytes += len;
    }
  } catch (error) {
    // A client let go (idle, or to make room) ended as if it had left; for other errors the finaliser closes the socket.
    if (!peerGone(error) && !(error instanceof ClientIdle) && !seat.evicted) throw error;
  } finally {
    seat.leave();
  }
  yield* OwnedSockets.close(client);
}

/** What `acceptOrDie` returns: a client, or the order to stop. */
export type AcceptOrDie = { readonly kind: "accept"; readonly client: OwnedSocket; readonly peer: Address } | { readonly kind: "die" };

/**
 * The book's `accept_or_die`: races an accepting task (given the listening
 * socket; see `acceptWhenPossible`) against one waiting for the stop condition.
 *
 * @example
 * ```ts
 * const next = yield* acceptOrDie(socket, ctx.shutdown, ctx.out);
 * if (next.kind === "die") return;
 * ```
 */
export function* acceptOrDie(fd: OwnedSocket, shutdown: Shutdown, out: Mutex): Generator<B.Instruction, AcceptOrDie, unknown> {
  function* accept(): Generator<B.Instruction, AcceptOrDie, unknown> {
    const [client, peer] = yield* acceptWhenPossible(
      () => OwnedSockets.accept(fd),
      (code) => printf(out, `domain ${B.Domain.self()}: accept failed with ${code}: accepting again once clients leave`),
    );
    Owner.transfer(client); // the new client goes to the parent, for its echo task…
    Owner.transfer(fd); // …and the listening socket back to it, for the next accept
    return { kind: "accept", client, peer };
  }
  function* orDie(): Generator<B.Instruction, AcceptOrDie, unknown> {
    yield* untilStop(shutdown);
    return { kind: "die" };
  }
  const first = yield* B.awaitFirst([B.spawn({ give: [fd] }, accept), B.spawn(orDie)]);
  if (!first.ok) throw first.error;
  return first.value;
}

/**
 * Runs `server(socket, ctx)`; if it fails, asks every domain to stop before
 * failing (so that one domain's error ends the program instead of leaving
 * the other servers running).
 *
 * @example
 * ```ts
 * const stats = yield* serverOrStopAll(socket, ctx);
 * ```
 */
export function* serverOrStopAll(socket: OwnedSocket, ctx: ServerContext): Generator<B.Instruction, Stats, unknown> {
  try {
    return yield* server(socket, ctx);
  } catch (error) {
    if (!(error instanceof B.Cancelled)) yield* stop(ctx.shutdown);
    throw error;
  }
}

/**
 * The book's `terminate`: awaits every remaining client task (they end when
 * their clients leave), raising the first error.
 */
function* terminate(orphans: B.Orphans<void>): Generator<B.Instruction, void, unknown> {
  for (const r of yield* B.drain(orphans)) if (!r.ok) throw r.error;
}

/**
 * The book's final `server`, from its first `accept_or_die` on: accepts
 * clients on `socket` (a listening socket this task owns; printing each one
 * under `ctx.out`) until the stop condition, then waits for its clients to
 * leave. Returns what it did.
 *
 * @example
 * ```ts
 * const socket = OwnedSockets.tcpv4();
 * yield* OwnedSockets.bindAndListen(socket, { host: "127.0.0.1", port: 3000 });
 * const stats = yield* server(socket, { shutdown: newShutdown(), out: Mutex.shared() });
 * ```
 */
export function* server(socket: OwnedSocket, ctx: ServerContext): Generator<B.Instruction, Stats, unknown> {
  const stats: Stats = { domain: B.Domain.self(), connections: 0, bytes: 0 };
  const orphans = B.orphans<void>();
  const clients = new Clients(ctx.limits ?? LIMITS);
  ctx.ready?.release(); // this domain accepts from now on
  for (;;) {
    yield* cleanUp(orphans);
    const next = yield* acceptOrDie(socket, ctx.shutdown, ctx.out);
    if (next.kind === "die") break; // the accepting task was cancelled: the listening socket is closed
    stats.connections++;
    if (ctx.verbose !== false) yield* printf(ctx.out, `new client: ${formatAddress(next.peer)} (domain ${stats.domain})`);
    clients.makeRoom(); // at the cap, the client silent the longest goes
    B.spawn({ orphans, give: [next.client] }, echo, next.client, stats, clients.add(next.client.value));
  }
  yield* terminate(orphans);
  return stats;
}
