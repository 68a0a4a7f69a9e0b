/**
 * Chapter 2, the synchronous echo server:
 *
 *     node dist/ch02-sync-echo.js [--port 3000] [--once]
 *
 * `--once` serves one client and ends ("Server terminated"), as the book's
 * first version; without it the server loops, as its second. Try
 * `nc 127.0.0.1 3000` in one terminal and `echo Hello | nc -q0 127.0.0.1 3000`
 * in another: the second client waits until the first one leaves.
 */
import { server } from "./ch02/echo.js";
import { serverArgs } from "./support/cli.js";
import { getsockname, listen } from "./support/pocket-unix.js";

const { host, port, values } = serverArgs({ once: { type: "boolean", default: false } });
const socket = await listen({ host, port }, 64);
const bound = getsockname(socket);
console.log(`synchronous echo server on ${bound.host}:${bound.port}`);
await server(socket, values.once === true ? 1 : Infinity);
