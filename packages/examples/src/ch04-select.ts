/**
 * Chapter 4, "Interacting with the system":
 *
 *     node dist/ch04-select.js [monitor|accept|echo] [--port 3000]
 *
 * - `monitor`: `select` in a loop until a client connects (prints "Monitor
 *   our file-descriptor." every 10 ms), then exits;
 * - `accept`: the toy scheduler accepts one client, then exits;
 * - `echo` (default): the asynchronous echo server; try two `nc` at once.
 */
import { acceptOnce, echoServer, monitor } from "./ch04/programs.js";
import { serverArgs } from "./support/cli.js";
import * as Unix from "./support/pocket-unix.js";

const { host, port, positionals } = serverArgs();
const program = positionals[0] ?? "echo";
const socket = await Unix.listen({ host, port }, 64);
const bound = Unix.getsockname(socket);
console.log(`${program}: listening on ${bound.host}:${bound.port}`);
switch (program) {
  case "monitor":
    await monitor(socket);
    break;
  case "accept":
    await acceptOnce(socket);
    break;
  case "echo":
    await echoServer(socket);
    break;
  default:
    console.error(`unknown program ${program}: use monitor, accept or echo`);
    process.exitCode = 2;
    Unix.close(socket);
}
