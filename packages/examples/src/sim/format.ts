/**
 * Chapter 8's `Queue.Empty`, found by `check` in a simulated world.
 *
 * The book's server prints "new client: …" with `Format.printf` from every
 * domain, and sometimes dies with `Fatal error: exception
 * Stdlib.Queue.Empty`: `Format` keeps its pending output in a `Queue`, and
 * two domains flushing it at once each see it non-empty, then one takes the
 * last piece and the other's `Queue.take` finds nothing. The fix is the
 * book's `mutex_out`: one printer at a time.
 *
 * Here the server's domains are accepting tasks of one host, and the
 * formatter flushes its queue to a terminal that takes a moment per piece:
 * a check (the queue is not empty) and an act (take a piece) with a wait
 * between them. Whether two prints overlap depends on when clients arrive
 * and on the schedule — which is what `check` explores, and `replay`
 * repeats.
 */
import * as B from "@bobbin/core";
import type { Build } from "@bobbin/sim";
import { Mutex } from "@bobbin/sync";
import { type Address, accept, bindAndListen, close, connect, read, type Socket, sleep, tcpv4, write } from "@bobbin/unix";
import { formatAddress } from "../support/address.js";

/** OCaml's `Stdlib.Queue.Empty`: `take` on an empty queue. */
export class QueueEmpty extends Error {
  override readonly name = "Queue.Empty";
  constructor() {
    super("Queue.take: the queue is empty");
  }
}

/** How long the terminal takes to draw one piece of output, in seconds. */
const DRAW = 0.002;

/**
 * The book's `Format`, reduced to its pending-output queue: `printf` queues
 * the pieces of a line, then flushes the queue to the terminal one piece at
 * a time. Not safe when two tasks print at once.
 */
export class Formatter {
  private readonly queue: string[] = [];
  /** What the terminal shows. */
  readonly screen: string[] = [];

  *printf(line: string): Generator<B.Instruction, void, unknown> {
    for (const piece of line.split(" ")) this.queue.push(piece);
    while (this.queue.length !== 0) {
      yield* sleep(DRAW); // the terminal draws…
      this.screen.push(this.take()); // …the next piece, if another flush did not take it meanwhile
    }
  }

  private take(): string {
    const piece = this.queue.shift();
    if (piece === undefined) throw new QueueEmpty();
    return piece;
  }
}

/** Options of {@link formatWorld}. */
export interface FormatWorldOptions {
  /** Print under a mutex, as the book's fix does (default false: the race). */
  readonly mutexOut?: boolean;
  /** How many accepting tasks (the book's domains; default 2). */
  readonly domains?: number;
  /** How many clients (default 4), each connecting once within the first second. */
  readonly clients?: number;
}

/**
 * A world for `check`: a server whose accepting tasks share one listening
 * socket and one formatter, and greet each client once they printed it;
 * clients that connect at random times and wait for the greeting.
 *
 * @example
 * ```ts
 * await check(formatWorld(), { runs: 200 });                  // rejects: Queue.Empty
 * await check(formatWorld({ mutexOut: true }), { runs: 200 }); // passes
 * ```
 */
export function formatWorld(options: FormatWorldOptions = {}): Build {
  const { mutexOut = false, domains = 2, clients = 4 } = options;
  return (sim) => {
    const format = new Formatter();
    const out = new Mutex();
    const printf = (line: string): B.Operation<void> => (mutexOut ? out.protect(() => format.printf(line)) : format.printf(line));
    function* domain(socket: Socket): Generator<B.Instruction, never, unknown> {
      for (;;) {
        const [client, peer] = yield* accept(socket);
        yield* printf(`new client: ${formatAddress(peer as Address)}`);
        yield* write(client, "welcome\n");
        yield* close(client);
      }
    }
    sim.host("server", function* server() {
      const socket = tcpv4();
      yield* bindAndListen(socket, { host: "0.0.0.0", port: 3000 });
      // The domains never return: the first to end failed, and takes the program with it.
      const first = yield* B.awaitFirst(Array.from({ length: domains }, () => B.spawn(domain, socket)));
      if (!first.ok) throw first.error;
    });
    for (let c = 1; c <= clients; c++) {
      sim.client(`client${c}`, function* client() {
        yield* sleep(Math.random());
        const sock = tcpv4();
        yield* connect(sock, { host: "server", port: 3000 });
        const buf = Buffer.alloc(16);
        while ((yield* read(sock, buf)) > 0); // the greeting comes once the server printed
        yield* close(sock);
      });
    }
  };
}
