/**
 * A key-value store that keeps a write-ahead log on its host's simulated
 * disk, and what its clients count on: a `put` that was acknowledged
 * survives crashes — checked while a chaos host crashes and restarts the
 * store, and the disk loses or tears what was not synced.
 *
 * Each `put` appends one record to `wal.log` and syncs it before answering
 * `ok`; at each start the store reads the log back into memory. A crash
 * can tear the last record (only its first bytes reach the disk), so each
 * record is a line carrying its length and a checksum: recovery skips a
 * line that is not whole, and ends a torn last line before appending, so
 * that a new record never follows torn bytes on its line. (Rewriting the
 * log instead would be a bug of its own: a crash may keep the emptying of
 * the file and lose the bytes written back.)
 *
 * The planted bug (`fsync: false`): the store does not sync. Many runs
 * pass — a crashed disk may keep what was not synced — until a crash loses
 * an acknowledged record: `check` finds it, shrinks it and replays it.
 */
import type * as B from "@bobbin/core";
import type { Build, Disk } from "@bobbin/sim";
import { sleep } from "@bobbin/unix";
import { request, serveEach } from "./requests.js";

/** An acknowledged `put` was not found after a crash. */
export class LostWrite extends Error {
  override readonly name = "LostWrite";
}

/** Options of {@link walWorld}. */
export interface WalWorldOptions {
  /** Sync each record before acknowledging it (default true; false is the bug). */
  readonly fsync?: boolean;
  /** How many keys the client puts (default 6). */
  readonly puts?: number;
}

const PORT = 5000;
const LOG = "wal.log";

/** A record of the log: `<length> <checksum> <key>=<value>\n`. */
export function record(key: string, value: string): string {
  const body = `${key}=${value}`;
  return `${body.length} ${checksum(body)} ${body}\n`;
}

function checksum(text: string): number {
  let sum = 7;
  for (let i = 0; i < text.length; i++) sum = (Math.imul(sum, 31) + text.charCodeAt(i)) >>> 0;
  return sum;
}

/**
 * Reads a log: the entries of its whole records, in order (a line that is
 * not whole, torn by a crash, is skipped), and whether its last line is
 * torn.
 */
export function recover(log: string): { readonly entries: Map<string, string>; readonly torn: boolean } {
  const entries = new Map<string, string>();
  const lines = log.split("\n");
  const last = lines.pop()!; // after the last "\n": "" or a torn record
  for (const line of lines) {
    const fields = /^(\d+) (\d+) (.*)$/.exec(line);
    if (fields === null) continue;
    const body = fields[3]!;
    if (body.length !== Number(fields[1]) || checksum(body) !== Number(fields[2])) continue;
    const eq = body.indexOf("=");
    entries.set(body.slice(0, eq), body.slice(eq + 1));
  }
  return { entries, torn: last !== "" };
}

/** The store: recovers from its log, then answers `put k v` and `get k`, one per connection. */
function* store(disk: Disk, fsync: boolean): Generator<B.Instruction, never, unknown> {
  let text = "";
  try {
    text = (yield* disk.readFile(LOG)).toString();
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ENOENT") throw error; // the first start: no log yet
  }
  const { entries, torn } = recover(text);
  const log = yield* disk.open(LOG, "a");
  if (torn) yield* log.write("\n"); // the torn line ends here; the next sync keeps this too
  function* answer(text: string): Generator<B.Instruction, string, unknown> {
    const [op, key = "", value = ""] = text.split(" ");
    if (op !== "put") return entries.get(key) ?? "none";
    yield* log.write(record(key, value));
    if (fsync) yield* log.sync(); // without it (the bug), "ok" promises what a crash may lose
    entries.set(key, value);
    return "ok";
  }
  return yield* serveEach(PORT, answer);
}

/** Sends one request; returns the answer, or null when the store did not answer (down, crashed meanwhile). */
function* ask(text: string): Generator<B.Instruction, string | null, unknown> {
  const answer = yield* request("db", PORT, text, 0.5);
  return answer === "" ? null : answer;
}

/** Asks until the store answers. */
function* insist(text: string): Generator<B.Instruction, string, unknown> {
  for (;;) {
    const answer = yield* ask(text);
    if (answer !== null) return answer;
    yield* sleep(0.05);
  }
}

/**
 * A world for `check`: the store on host `db`, a client that puts keys
 * (each until it is acknowledged) and then reads every one back, and a
 * chaos host that crashes and restarts the store at random times.
 *
 * @example
 * ```ts
 * await check(walWorld(), { runs: 100 });                 // passes
 * await check(walWorld({ fsync: false }), { runs: 100 }); // rejects: LostWrite
 * ```
 */
export function walWorld(options: WalWorldOptions = {}): Build {
  const { fsync = true, puts = 6 } = options;
  return (sim) => {
    let writing = true;
    sim.host("db", () => store(disk, fsync));
    const disk = sim.disk("db");
    sim.client("client", function* () {
      const acknowledged: [string, string][] = [];
      for (let i = 1; i <= puts; i++) {
        yield* sleep(Math.random() * 0.05);
        if ((yield* insist(`put k${i} v${i}`)) === "ok") acknowledged.push([`k${i}`, `v${i}`]);
      }
      writing = false;
      for (const [key, value] of acknowledged) {
        const found = yield* insist(`get ${key}`);
        if (found !== value) throw new LostWrite(`${key} was acknowledged as ${value}, and is now ${found}`);
      }
      return acknowledged.length;
    });
    sim.host("chaos", function* chaos() {
      while (writing) {
        yield* sleep(Math.random() * 0.1);
        if (!writing) break;
        sim.crash("db");
        yield* sleep(Math.random() * 0.05);
        sim.restart("db");
      }
    });
  };
}
