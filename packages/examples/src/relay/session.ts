/**
 * One client of the chat relay: a task that reads its lines and commands,
 * and a task that writes the room's lines to it, in a group, so that when
 * either ends or fails the other is stopped with it.
 */
import * as B from "@bobbin/core";
import { type BroadcastReceived, EMPTY, END } from "@bobbin/sync";
import { type Address, type Socket, Timeout, withTimeout, write } from "@bobbin/unix";
import { formatAddress } from "../support/address.js";
import { type Client, ClientIdle } from "../support/clients.js";
import { peerGone } from "../support/peer.js";
import { LineReader, LineTooLong } from "./lines.js";
import type { Line, Member, Room } from "./room.js";

/** The longest line a client may send, in bytes. */
export const MAX_LINE = 4096;
/** How long a last word to a client (the shutdown, a line too long) may take: a client that does not read is not waited for. */
export const LAST_WORD_SECONDS = 1;
/** What the commands are, for the welcome and for an unknown command. */
const COMMANDS = "/nick <name>, /who, /quit";

/** Where the relay says what happens (a client came, left). */
export type Log = (line: string) => void;

/** The most lines one write takes. */
const BATCH = 256;

/**
 * Writes the room's lines to the client, and the replies to its commands
 * first, until its inbox ends; what is queued when it writes goes in one
 * write. When lines were dropped because the client read too slowly, it
 * says how many before the next line.
 */
function* deliver(sock: Socket, me: Member): Generator<B.Instruction, void, unknown> {
  const batch: string[] = [];
  let missed = 0;
  const add = (r: BroadcastReceived<Line>): boolean => {
    if (r.done) return false;
    missed += r.missed;
    if (r.value.from === me) return true;
    if (missed > 0) batch.push(`* ${missed} line(s) dropped: you read too slowly`);
    missed = 0;
    batch.push(r.value.text);
    return true;
  };
  for (;;) {
    const next = yield* B.select([me.replies.recv(), me.inbox.recv()]);
    if (next.index === 0) {
      if (next.value === END) return;
      batch.push(next.value);
    } else if (!add(next.value)) return;
    for (let v = me.replies.tryRecv(); v !== EMPTY && v !== END; v = me.replies.tryRecv()) batch.push(v);
    while (batch.length < BATCH) {
      const r = me.inbox.tryRecv();
      if (r === undefined || !add(r)) break;
    }
    if (batch.length === 0) continue;
    const text = `${batch.join("\n")}\n`;
    batch.length = 0;
    yield* write(sock, text);
  }
}

/**
 * Reads the client's lines until it ends or quits: lines go to the room,
 * commands are answered. Each line must come within the idle timeout.
 */
function* converse(sock: Socket, room: Room, me: Member, seat: Client): Generator<B.Instruction, void, unknown> {
  const others = room.names.filter((name) => name !== me.name);
  yield* me.replies.send(`* welcome, ${me.name}; here: ${others.length === 0 ? "nobody else" : others.join(", ")}; ${COMMANDS}`);
  const lines = new LineReader(sock, MAX_LINE);
  for (let line = yield* seat.heard(lines.next()); line !== null; line = yield* seat.heard(lines.next())) {
    if (line === "") continue;
    if (!line.startsWith("/")) {
      room.say(me, line);
      continue;
    }
    const space = line.indexOf(" ");
    const command = space < 0 ? line : line.slice(0, space);
    const argument = space < 0 ? "" : line.slice(space + 1).trim();
    if (command === "/quit") return;
    if (command === "/nick") {
      const refused = room.rename(me, argument);
      yield* me.replies.send(refused === null ? `* you are ${me.name}` : `* ${refused}`);
    } else if (command === "/who") yield* me.replies.send(`* here: ${room.names.join(", ")}`);
    else yield* me.replies.send(`* unknown command ${command}: ${COMMANDS}`);
  }
}

/** Writes a last line to the client, if it takes it within `LAST_WORD_SECONDS`; returns whether it did. */
function* lastWord(sock: Socket, text: string): Generator<B.Instruction, boolean, unknown> {
  try {
    yield* withTimeout(LAST_WORD_SECONDS, write(sock, `${text}\n`));
    return true;
  } catch (error) {
    if (error instanceof Timeout || peerGone(error)) return false;
    throw error;
  }
}

/**
 * Serves one client until it leaves (end of stream, `/quit`, a reset
 * connection), stays silent for the idle timeout, or the relay stops: it
 * joins the room, its lines go to the others, the others' lines come to
 * it. When the task is cancelled (the relay shuts down), the client is
 * told before its socket closes. When the relay lets the client go to make
 * room for a new one, its socket is closed under it and the session ends
 * as if the client had left. The socket is closed on every way out
 * (`using`), and the client leaves `seat`'s table.
 *
 * @example
 * ```ts
 * const [client, peer] = yield* accept(server);
 * g.spawn(session, room, client, peer, console.log, clients.add(client));
 * ```
 * @throws Cancelled when cancelled (after telling the client); a socket
 * error other than the client going away (`ECONNRESET`, `EPIPE`).
 */
export function* session(room: Room, client: Socket, peer: Address, log: Log, seat: Client): Generator<B.Instruction, void, unknown> {
  using sock = client;
  const me = room.join();
  log(`+ ${me.name} (${formatAddress(peer)})`);
  try {
    yield* B.group(function* (g) {
      g.spawn(deliver, sock, me);
      yield* converse(sock, room, me, seat);
      g.cancel(); // the client left: what was still on its way to it is dropped
    });
  } catch (error) {
    if (error instanceof B.Cancelled) {
      if (yield* lastWord(sock, "* the relay is shutting down: goodbye")) room.told++;
      throw error;
    }
    if (error instanceof LineTooLong || error instanceof ClientIdle) yield* lastWord(sock, `* ${error.message}: goodbye`);
    else if (!peerGone(error) && !seat.evicted) throw error;
  } finally {
    seat.leave();
    room.leave(me);
    log(`- ${me.name}`);
  }
}
