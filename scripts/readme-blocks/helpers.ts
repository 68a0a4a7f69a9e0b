// What markers' preludes may import as "../helpers.js": the other side of a README's
// server, so that a block that serves forever can be run and checked. The runner copies
// this file into the blocks' project (src/helpers.ts) and compiles it with them.

import { type AddressInfo, connect, type Socket } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import * as B from "@bobbin/core";
import { accept, bindAndListen, close, getsockname, read, connect as tcpConnect, tcpv4, write } from "@bobbin/unix";
import { selfSigned } from "./self-signed.js";

function fail(why: string): never {
  console.error(why);
  process.exit(1);
}

/** Connects to `port` on loopback, trying again while nobody listens yet (for up to 10 s). */
function connectSoon(port: number, connected: (sock: Socket) => void): void {
  const deadline = Date.now() + 10_000;
  const attempt = () => {
    const sock = connect(port, "127.0.0.1", () => connected(sock));
    sock.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED" && Date.now() < deadline) setTimeout(attempt, 50);
      else fail(`the client of port ${port} failed: ${error.message}`);
    });
  };
  attempt();
}

/**
 * Checks a server's echo from outside: sends `message`, half-closes, and once it came back
 * whole exits the process with 0 (the server in the block never returns by itself). Another
 * answer exits 1, saying what came back.
 */
export function exitAfterEcho(port: number, message: string): void {
  connectSoon(port, (sock) => {
    const got: Buffer[] = [];
    sock.on("data", (chunk: Buffer) => got.push(chunk));
    sock.on("end", () => {
      const back = Buffer.concat(got).toString();
      if (back === message) process.exit(0);
      fail(`the echo server answered "${back}" to "${message}"`);
    });
    sock.end(message);
  });
}

/**
 * Plays Ctrl-C against a server: sends `message` without ending, and once it came back whole
 * sends SIGINT to this process, whose exit code then tells how the server stopped. Another
 * answer exits 1.
 */
export function interruptAfterEcho(port: number, message: string): void {
  connectSoon(port, (sock) => {
    let back = "";
    sock.setEncoding("utf8");
    sock.on("data", (chunk: string) => {
      back += chunk;
      if (back === message) process.kill(process.pid, "SIGINT");
      else if (!message.startsWith(back)) fail(`the echo server answered "${back}" to "${message}"`);
    });
    sock.write(message);
  });
}

/**
 * A TLS echo server on loopback with a certificate for "localhost" made in memory; `ca` is
 * that certificate, for clients. It keeps no process alive (unref'd).
 */
export async function tlsEchoServer(): Promise<{ port: number; ca: string }> {
  const { key, cert } = selfSigned();
  const server = createTlsServer({ key, cert }, (sock) => sock.pipe(sock)).unref();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, ca: cert };
}

/**
 * A `main` for any backend: a TCP round trip on loopback through the run's own sockets
 * (a listener, a client, and a task that echoes one message); fails if the echo differs.
 */
export function* loopbackEcho(): Generator<B.Instruction, void, unknown> {
  const server = tcpv4();
  try {
    yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
    const echo = B.spawn(function* () {
      const [peer] = yield* accept(server);
      const buf = Buffer.alloc(16);
      yield* write(peer, buf, 0, yield* read(peer, buf));
      yield* close(peer);
    });
    const client = tcpv4();
    yield* tcpConnect(client, getsockname(server));
    yield* write(client, "ping");
    const buf = Buffer.alloc(16);
    const back = buf.toString("utf8", 0, yield* read(client, buf));
    yield* close(client);
    yield* B.awaitExn(echo);
    if (back !== "ping") throw new Error(`the loopback echo answered "${back}"`);
  } finally {
    yield* close(server);
  }
}
