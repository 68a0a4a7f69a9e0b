/**
 * @bobbin/unix — Miou_unix for Bobbin: `run` with an I/O backend, `sleep`,
 * TCP/UDP/Unix sockets, `withTimeout` and OS signals, all as operations of
 * fibers (`yield*`); a backend contract, and a default backend on Node's own
 * libuv.
 *
 * @example
 * ```ts
 * import * as B from "@bobbin/core";
 * import { run, tcpv4, bindAndListen, accept, read, write, close, getsockname } from "@bobbin/unix";
 *
 * function* echo(client: Socket) {
 *   const buf = Buffer.alloc(4096);
 *   try {
 *     for (let n; (n = yield* read(client, buf)) > 0; ) yield* write(client, buf, 0, n);
 *   } finally {
 *     yield* close(client);
 *   }
 * }
 *
 * await run(function* () {
 *   const server = tcpv4();
 *   yield* bindAndListen(server, { host: "127.0.0.1", port: 3000 });
 *   const clients = B.orphans<void>();
 *   for (;;) {
 *     for (let t = B.care(clients); t; t = B.care(clients)) yield* B.awaitTask(t);
 *     const [client] = yield* accept(server);
 *     B.spawn({ orphans: clients }, echo, client);
 *   }
 * });
 * ```
 * @packageDocumentation
 */
export { run, type RunOptions } from "./run.js";
export { defineBackend } from "./define.js";
export { ShareGuard, type SharedSocket } from "./share.js";
export { sleep } from "./sleep.js";
export { tcpv4, tcpv6, unixSocket, bindAndListen, accept, connect } from "./tcp.js";
export { udpv4, udpv6, recvfrom, sendto } from "./udp.js";
export { read, readExactly, write, shutdown, close, getsockname } from "./socket.js";
export { withTimeout, checkTimeouts } from "./timeout.js";
export { onSignal, type SignalHandler } from "./signals.js";
export { Ownership, type OwnedSocket } from "./ownership.js";
export { Timeout, EndOfFile, SocketClosed, systemError } from "./errors.js";
export {
  BACKEND_METHODS,
  type Backend,
  type Socket,
  type SocketKind,
  type SocketState,
  type Address,
  type InetAddress,
  type UnixAddress,
  type ListenOptions,
  type ShutdownCommand,
  type DeadlineHandle,
} from "./backend.js";
export { NodeLoop, type FlushMode } from "./loop.js";
export { Parked, type Signaller } from "./parked.js";
export { Timers, DeadlineHeap, type Deadline } from "./timers.js";
export { libuv, LibuvBackend, type LibuvOptions } from "./libuv/index.js";
