/**
 * A small replicated service in a simulated world: a register kept by three
 * replicas and read and written through majorities (Attiya, Bar-Noy and
 * Dolev's algorithm), and what its clients can count on — every operation
 * behaves as if it happened at one instant between its call and its return
 * (linearizability) — checked under partitions, crashes and restarts.
 *
 * Each value carries a tag `[n, writer]`, ordered by `n` then by writer. A
 * write asks a majority for the highest tag, then stores its value with
 * `[n + 1, writer]` on a majority. A read asks a majority for the highest
 * tag and value, writes them back to a majority (so that no later read can
 * see older), then returns the value. Replicas keep their state on a disk
 * that survives their crashes; any two majorities meet, so every operation
 * sees the ones that finished before it began.
 *
 * Each request is a TCP connection to a replica: the request, a
 * half-close, the answer. An operation asks every replica and goes on with
 * the first majority of answers; a replica that does not answer within
 * 0.5 s (down, partitioned away) does not count, and a round without a
 * majority is tried again.
 */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import type { Build, Sim } from "@bobbin/sim";
import { sleep } from "@bobbin/unix";
import { request as send, serveEach } from "./requests.js";

/** A value's tag: a counter, then the writer's name to break ties. */
export type Tag = readonly [number, string];

/** What a replica stores. */
interface Stored {
  tag: Tag;
  value: number;
}

type Request = { op: "get" } | { op: "set"; tag: Tag; value: number };

/** One operation as its client saw it: for the check. */
export interface Operation {
  readonly client: string;
  readonly kind: "read" | "write";
  readonly tag: Tag;
  readonly value: number;
  /** When it was called and when it returned, in virtual seconds. */
  readonly start: number;
  readonly end: number;
}

/** A read returned something no linearizable register could. */
export class NotLinearizable extends Error {
  override readonly name = "NotLinearizable";
}

/** Options of {@link registerWorld}. */
export interface RegisterWorldOptions {
  /** How many replicas must answer (default 2 of 3: a majority). 1 is a bug: reads may miss writes. */
  readonly quorum?: number;
  /** How many operations each client makes (default 8). */
  readonly operations?: number;
  /** Whether the chaos host partitions, crashes and restarts (default true). */
  readonly chaos?: boolean;
}

const REPLICAS = ["replica1", "replica2", "replica3"];
const PORT = 4000;
/** How long a replica has to answer, in seconds. */
const PATIENCE = 0.5;
const INITIAL: Stored = { tag: [0, ""], value: 0 };

/** Whether tag `a` comes after tag `b`. */
export function after(a: Tag, b: Tag): boolean {
  return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
}

/** A replica: answers each connection's request from its disk. */
function replica(disk: Stored): () => Generator<B.Instruction, never, unknown> {
  function* answer(text: string): Generator<B.Instruction, string | null, unknown> {
    let request: Request;
    try {
      request = JSON.parse(text) as Request;
    } catch {
      return null; // cut off mid-request: no answer
    }
    if (request.op === "set" && after(request.tag, disk.tag)) {
      disk.tag = request.tag;
      disk.value = request.value;
    }
    return JSON.stringify(request.op === "get" ? disk : { ok: true });
  }
  return function* replica() {
    return yield* serveEach(PORT, answer);
  };
}

/** Sends `request` to `name` and returns its answer, or null when it does not come in time. */
function* ask(name: string, request: Request): Generator<B.Instruction, Stored | null, unknown> {
  const text = yield* send(name, PORT, JSON.stringify(request), PATIENCE);
  if (text === null) return null;
  try {
    return JSON.parse(text) as Stored;
  } catch {
    return null; // cut off mid-answer
  }
}

/**
 * Sends `request` to every replica and returns the first `quorum` answers
 * (the other requests are cancelled: they may or may not have arrived); a
 * round with fewer answers is tried again a little later.
 */
function* majority(request: Request, quorum: number): Generator<B.Instruction, Stored[], unknown> {
  for (;;) {
    const answers: Stored[] = [];
    let settled = 0;
    let wake = new L.Trigger();
    const asking = REPLICAS.map((name) =>
      B.spawn(function* () {
        const answer = yield* ask(name, request);
        if (answer !== null) answers.push(answer);
        settled++;
        wake.signal();
      }),
    );
    while (answers.length < quorum && settled < REPLICAS.length) {
      wake = new L.Trigger();
      yield* wake.wait();
    }
    for (const t of asking) yield* B.cancel(t);
    if (answers.length >= quorum) return answers.slice(0, quorum);
    yield* sleep(0.1 + Math.random() * 0.2);
  }
}

function highest(answers: Stored[]): Stored {
  return answers.reduce((best, a) => (after(a.tag, best.tag) ? a : best));
}

/** A client: writes (its own increasing values) or reads, checking each read against the history. */
function client(sim: Sim, name: string, writes: boolean, options: Required<RegisterWorldOptions>, history: Operation[]) {
  return function* client(): Generator<B.Instruction, number, unknown> {
    for (let i = 1; i <= options.operations; i++) {
      yield* sleep(Math.random() * 0.3);
      const start = sim.now();
      const { tag, value } = highest(yield* majority({ op: "get" }, options.quorum));
      let op: Operation;
      if (writes) {
        const mine: Tag = [tag[0] + 1, name];
        const v = i * 100 + Number(name.slice(-1));
        yield* majority({ op: "set", tag: mine, value: v }, options.quorum);
        op = { client: name, kind: "write", tag: mine, value: v, start, end: sim.now() };
      } else {
        yield* majority({ op: "set", tag, value }, options.quorum); // write back what is read
        op = { client: name, kind: "read", tag, value, start, end: sim.now() };
        check(op, history);
      }
      history.push(op);
    }
    return options.operations;
  };
}

/**
 * The guarantee, for a read: it returns a value some write wrote (or the
 * initial one), with a tag no older than any operation that finished
 * before the read began.
 *
 * @throws NotLinearizable when the read breaks it.
 */
export function check(op: Operation, history: readonly Operation[]): void {
  const source =
    op.tag[0] === 0
      ? { value: INITIAL.value }
      : history.find((o) => o.kind === "write" && o.tag[0] === op.tag[0] && o.tag[1] === op.tag[1]);
  if (source !== undefined && source.value !== op.value)
    throw new NotLinearizable(`${op.client} read ${op.value} under tag ${op.tag}, written as ${source.value}`);
  for (const earlier of history) {
    if (earlier.end < op.start && after(earlier.tag, op.tag)) {
      throw new NotLinearizable(
        `${op.client} read tag ${op.tag} (value ${op.value}) at ${op.start}–${op.end}, but ${earlier.client}'s ${earlier.kind} of tag ${earlier.tag} had finished at ${earlier.end}`,
      );
    }
  }
}

/**
 * A world for `sim.run()` or `check`: three replicas, two writers, two
 * readers, and (unless `chaos: false`) a chaos host that partitions clients
 * from replicas, and crashes and restarts replicas (one at a time; their
 * disks survive).
 *
 * @example
 * ```ts
 * await check(registerWorld(), { runs: 50 });               // passes
 * await check(registerWorld({ quorum: 1 }), { runs: 50 });  // rejects: NotLinearizable
 * ```
 */
export function registerWorld(opts: RegisterWorldOptions = {}): Build {
  const options: Required<RegisterWorldOptions> = { quorum: 2, operations: 8, chaos: true, ...opts };
  return (sim) => {
    const history: Operation[] = [];
    for (const name of REPLICAS) sim.host(name, replica({ ...INITIAL }));
    const clients = ["writer1", "writer2", "reader1", "reader2"];
    let running = clients.length;
    for (const name of clients) {
      const body = client(sim, name, name.startsWith("writer"), options, history);
      sim.client(name, function* () {
        try {
          return yield* body();
        } finally {
          running--;
        }
      });
    }
    if (!options.chaos) return;
    sim.host("chaos", function* chaos() {
      while (running > 0) {
        yield* sleep(0.2 + Math.random() * 0.6);
        const replicaName = REPLICAS[Math.floor(Math.random() * REPLICAS.length)]!;
        if (Math.random() < 0.5) {
          const clientName = clients[Math.floor(Math.random() * clients.length)]!;
          sim.partition(clientName, replicaName);
          yield* sleep(Math.random() * 1.5);
          sim.repair(clientName, replicaName);
        } else {
          sim.crash(replicaName);
          yield* sleep(Math.random() * 1.5);
          sim.restart(replicaName);
        }
      }
    });
  };
}
