/**
 * Chapter 8's echo server in a simulated world (`@bobbin/sim`): the book's
 * final `server`, its code unchanged (`../ch08/server.ts`), runs on a host
 * named `echo`; clients on other hosts send numbered messages and check
 * every byte that comes back; a chaos host partitions links, resets
 * connections, and crashes and restarts the server — every choice drawn
 * from the world's seed. When the clients are done, the last one raises
 * SIGINT in the world and the server stops as the book's does.
 *
 * One world of many seeds shows what the server and TCP promise under
 * faults: a session that is not broken echoes every byte once, in order; a
 * session broken by a reset or a crash echoed a prefix of what was sent,
 * unchanged; and a client that tries again gets through.
 */
import type * as B from "@bobbin/core";
import type { Sim } from "@bobbin/sim";
import { Condition, Mutex } from "@bobbin/sync";
import { close, connect, EndOfFile, OwnedSockets, onSignal, read, type Socket, sleep, tcpv4, write } from "@bobbin/unix";
import { type ServerContext, type Stats, server } from "../ch08/server.js";
import { stop } from "../ch08/shutdown.js";
import { Random } from "../support/random.js";

/** Options of {@link echoWorld}. */
export interface EchoWorldOptions {
  /** How many client hosts (default 3). */
  readonly clients?: number;
  /** How many sessions (connections) each client completes (default 4). */
  readonly sessions?: number;
  /** How many messages each session sends and checks (default 20). */
  readonly messages?: number;
  /** Each message's size in bytes (default 64). */
  readonly size?: number;
  /** Seconds a client waits between two messages (default 0). */
  readonly think?: number;
  /** Whether the chaos host breaks things (default true). */
  readonly chaos?: boolean;
}

/** What a client did. */
export interface ClientReport {
  /** Sessions that sent and checked every message. */
  sessions: number;
  /** Sessions a reset or a crash broke (their echoed prefix was checked). */
  broken: number;
  /** Round trips whose every byte was checked. */
  roundTrips: number;
  /** Bytes checked, in complete and broken sessions. */
  bytes: number;
}

/** What the chaos host did. */
export interface ChaosReport {
  partitions: number;
  resets: number;
  crashes: number;
}

/** What the world reports once `sim.run()` is over. */
export interface EchoWorld {
  /** Each client's report, by host name. */
  readonly clients: Map<string, ClientReport>;
  readonly chaos: ChaosReport;
  /** What the last incarnation of the server said when it stopped (null if it never did). */
  stats: Stats | null;
}

/** The port the server listens on. */
export const ECHO_PORT = 3000;

/** Errors that say a connection was broken by the network or the peer, not by a bug. */
function broken(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof EndOfFile || code === "ECONNRESET" || code === "EPIPE";
}

/** Errors of a connect while the server is down or out of reach: try again. */
function unreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ECONNREFUSED" || code === "ETIMEDOUT";
}

/** The bytes of message `m` of session `s` of client `c`: different everywhere, so a misplaced byte shows. */
export function message(c: number, s: number, m: number, size: number): Buffer {
  const random = new Random(((c * 7919 + s) * 104_729 + m) >>> 0);
  const buf = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) buf[i] = random.int(256);
  return buf;
}

/** Connects to the server, trying again every 0.1 s while it is down or out of reach. */
function* dial(): Generator<B.Instruction, Socket, unknown> {
  for (;;) {
    const sock = tcpv4();
    try {
      yield* connect(sock, { host: "echo", port: ECHO_PORT });
      return sock;
    } catch (error) {
      yield* close(sock);
      if (!unreachable(error)) throw error;
    }
    yield* sleep(0.1);
  }
}

/** One session: sends each message and reads its echo back, checking every byte; false when the connection broke. */
function* session(
  c: number,
  s: number,
  options: Required<EchoWorldOptions>,
  report: ClientReport,
): Generator<B.Instruction, boolean, unknown> {
  const sock = yield* dial();
  const back = Buffer.alloc(options.size);
  try {
    for (let m = 0; m < options.messages; m++) {
      const sent = message(c, s, m, options.size);
      let got = 0;
      try {
        yield* write(sock, sent);
        for (let n: number; got < sent.length; got += n) {
          n = yield* read(sock, back, got);
          if (n === 0) throw new EndOfFile(got, sent.length);
        }
      } catch (error) {
        if (!broken(error)) throw error;
        // what came back before the break is a prefix of what was sent, unchanged
        if (!back.subarray(0, got).equals(sent.subarray(0, got)))
          throw new Error(`client ${c}, session ${s}: a broken echo differs from what was sent`);
        report.bytes += got;
        return false;
      }
      if (!back.equals(sent)) throw new Error(`client ${c}, session ${s}, message ${m}: the echo differs from what was sent`);
      report.roundTrips++;
      report.bytes += got;
      if (options.think > 0) yield* sleep(options.think);
    }
    return true;
  } finally {
    yield* close(sock);
  }
}

/**
 * Declares the world on `sim`: the server host `echo`, client hosts
 * `client1`…, and (unless `chaos: false`) a `chaos` host. Returns the report
 * the run fills in. `sim.run()` resolves with the clients' reports and the
 * server's stats.
 *
 * @example
 * ```ts
 * const sim = new Sim({ seed: 42 });
 * const world = echoWorld(sim, { clients: 3 });
 * await sim.run();
 * console.log(world.clients, world.chaos, world.stats);
 * ```
 */
export function echoWorld(sim: Sim, opts: EchoWorldOptions = {}): EchoWorld {
  const options: Required<EchoWorldOptions> = { clients: 3, sessions: 4, messages: 20, size: 64, think: 0, chaos: true, ...opts };
  const world: EchoWorld = { clients: new Map(), chaos: { partitions: 0, resets: 0, crashes: 0 }, stats: null };
  let running = options.clients;
  let stopping = false;

  // The server: the book's main, on one host, without worker domains (the
  // world's tasks all run on one thread), its stop condition made of local
  // primitives; SIGINT stops it as in chapter 8 (and a server restarted
  // after the signal stops at once).
  sim.client("echo", function* echo() {
    const ctx: ServerContext = {
      shutdown: { mutex: new Mutex(), condition: new Condition(), requested: new Int32Array(1) },
      out: new Mutex(),
      verbose: false,
    };
    onSignal("SIGINT", function* () {
      stopping = true;
      yield* stop(ctx.shutdown);
    });
    if (stopping) yield* stop(ctx.shutdown);
    const socket = OwnedSockets.tcpv4();
    yield* OwnedSockets.bindAndListen(socket, { host: "0.0.0.0", port: ECHO_PORT });
    world.stats = yield* server(socket, ctx);
    return world.stats;
  });

  for (let c = 1; c <= options.clients; c++) {
    const name = `client${c}`;
    const report: ClientReport = { sessions: 0, broken: 0, roundTrips: 0, bytes: 0 };
    world.clients.set(name, report);
    sim.client(name, function* client() {
      for (let s = 0; report.sessions < options.sessions; s++) {
        if (yield* session(c, s, options, report)) report.sessions++;
        else report.broken++;
      }
      if (--running === 0) sim.signal("SIGINT"); // the last one out stops the server
      return report;
    });
  }

  if (options.chaos) {
    sim.host("chaos", function* chaos() {
      while (running > 0) {
        yield* sleep(0.05 + Math.random() * 0.5);
        if (running === 0) break;
        const victim = `client${1 + Math.floor(Math.random() * options.clients)}`;
        const dice = Math.random();
        if (dice < 0.4) {
          world.chaos.partitions++;
          sim.partition(victim, "echo");
          yield* sleep(Math.random() * 2);
          sim.repair(victim, "echo");
        } else if (dice < 0.75) {
          world.chaos.resets++;
          sim.reset(victim, "echo");
        } else {
          world.chaos.crashes++;
          sim.crash("echo");
          yield* sleep(Math.random());
          sim.restart("echo");
        }
      }
    });
  }
  return world;
}
