/**
 * A chat relay over TCP, the kind of server structured concurrency is for:
 *
 *     node dist/chat-relay.js [--port 3000] [--queue 256] [--max-clients auto|n] [--idle-timeout 120]
 *
 * Every line a client sends goes to every other client (`name: text`); the
 * relay says who joins and leaves (`* …`); `/nick name` renames, `/who`
 * lists, `/quit` leaves. Try it with two or three `nc 127.0.0.1 3000`.
 *
 * A slow client holds up nobody: each client has a queue of `--queue` lines;
 * when it is full the oldest line is dropped and the client is told how many
 * it missed. At most `--max-clients` clients at once (`auto`, the default:
 * what the process's descriptors allow, at most 1024): at the cap, the
 * client silent the longest makes room for the new one; a client silent for
 * `--idle-timeout` seconds (default 120) is let go. `main` runs it: Ctrl-C (or SIGTERM) cancels the relay, every
 * client is told and its socket closed, and the exit code is 130 (143); the
 * last line checks that no socket was left open.
 */
import { bindAndListen, getsockname, main, tcpv4 } from "@bobbin/unix";
import { Room } from "./relay/room.js";
import { serve } from "./relay/server.js";
import { formatAddress } from "./support/address.js";
import { CLIENT_LIMIT_OPTIONS, clientLimitsArgs } from "./support/clients.js";
import { fdTable, releaseReport } from "./support/fds.js";
import { serverProgram } from "./support/program.js";

const { host, port, values, backend } = await serverProgram({ queue: { type: "string", default: "256" }, ...CLIENT_LIMIT_OPTIONS });
const queue = Number(values.queue);
if (!Number.isInteger(queue) || queue < 1)
  throw new RangeError(`--queue must be an integer ≥ 1 (lines kept per client), got ${values.queue}`);
const limits = clientLimitsArgs(values, 1);

const before = fdTable();
const room = new Room(queue);
main(
  function* () {
    using server = tcpv4();
    yield* bindAndListen(server, { host, port });
    console.log(
      `chat relay on ${formatAddress(getsockname(server))}: ${queue} line(s) queued per client, a slow one loses its oldest; ` +
        `at most ${limits.maxClients} client(s), ${limits.idleSeconds} s of silence each`,
    );
    yield* serve(server, room, (line) => console.log(line), limits);
  },
  {
    backend: backend.factory,
    // After the run, every handle released: what the relay did, and whether a socket was left open.
    onExit(code) {
      console.log(
        `relay stopped (exit code ${code}): ${room.joined} client(s) served, ${room.said} line(s) relayed, ${room.told} told of the shutdown`,
      );
      console.log(releaseReport(before).line);
    },
  },
);
