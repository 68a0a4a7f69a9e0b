/**
 * @bobbin/unix — Miou_unix for Bobbin: `run` with an I/O backend, `sleep`,
 * TCP/UDP/Unix sockets, `withTimeout` and OS signals, all as operations of
 * fibers (`yield*`); a backend contract, and a default backend on Node's own
 * libuv. What a backend's author needs is `@bobbin/unix/backend`.
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

export type { FlushMode } from "./backend/flush-mode.js";
export type {
  Address,
  Backend,
  Chunk,
  HostServices,
  InetAddress,
  ListenOptions,
  ListenSettings,
  ShutdownCommand,
  Socket,
  SocketKind,
  SocketState,
  UnixAddress,
} from "./contract.js";
export { defineBackend } from "./define.js";
export { type LookupAddress, type LookupOptions, lookup } from "./dns.js";
export { ChunkMisuse, DrainTimeout, EndOfFile, SocketClosed, Timeout, Unsupported } from "./errors.js";
export { appendFile, type FileHandle, type OpenFlags, open, readFile, writeFile } from "./files.js";
export { libuv } from "./libuv/factory.js";
export type { LibuvOptions } from "./libuv/options.js";
export { type MainOptions, main } from "./main.js";
export { fromStream } from "./node-stream/from-stream.js";
export type { NodeStream } from "./node-stream/socket.js";
export { type SocketStream, type ToStreamOptions, toStream } from "./node-stream/to-stream.js";
export { type OwnedSocket, OwnedSockets } from "./ownership.js";
export { ofFd, pipe } from "./pipe.js";
export { type ChildProcess, type ProcessExit, type SpawnProcessOptions, type StdioMode, spawnProcess } from "./process.js";
export { type RunOptions, run } from "./run.js";
export { onSignal, type SignalHandler } from "./signals.js";
export { sleep } from "./sleep.js";
export { close, getsockname, read, readChunk, readExactly, shutdown, write } from "./socket.js";
export { accept, bindAndListen, connect, tcpv4, tcpv6, unixSocket } from "./tcp.js";
export { withTimeout } from "./timeout.js";
export { recvfrom, sendto, udpv4, udpv6 } from "./udp.js";
