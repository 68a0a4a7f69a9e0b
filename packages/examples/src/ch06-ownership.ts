/**
 * Chapter 6, the echo server with owned sockets (OwnedSockets):
 *
 *     node dist/ch06-ownership.js [--port 3000]
 *
 * Runs until killed (chapter 8 stops cleanly on SIGINT). Try
 * `echo Hello | nc -q0 127.0.0.1 3000`. Runs on the native backend when
 * its addon is built, on libuv otherwise (`BOBBIN_BACKEND=libuv` forces it).
 */
import { server } from "./ch06/ownership.js";
import { runEchoServer } from "./support/program.js";

await runEchoServer(server);
