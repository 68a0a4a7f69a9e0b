/**
 * Programs the tests run on simulated hosts: plain `@bobbin/unix` code, as
 * any program would be written.
 */
import * as B from "@bobbin/core";
import { accept, bindAndListen, close, connect, read, readExactly, type Socket, tcpv4, write } from "@bobbin/unix";

/** Echoes one client until it ends its stream; returns the bytes echoed. */
export function* echo(client: Socket): Generator<B.Instruction, number, unknown> {
  const buf = Buffer.alloc(4096);
  let total = 0;
  try {
    for (let n: number; (n = yield* read(client, buf)) > 0; total += n) yield* write(client, buf, 0, n);
  } finally {
    yield* close(client);
  }
  return total;
}

/** A TCP echo server on `port` of every address, serving each client in its own task, forever. */
export function echoServer(port: number): () => Generator<B.Instruction, never, unknown> {
  return function* echoServer() {
    const server = tcpv4();
    yield* bindAndListen(server, { host: "0.0.0.0", port });
    const clients = B.orphans<number>();
    for (;;) {
      for (let t = B.care(clients); t; t = B.care(clients)) yield* B.awaitTask(t);
      const [client] = yield* accept(server);
      B.spawn({ orphans: clients }, echo, client);
    }
  };
}

/** Connects to `host:port`, sends `data`, reads it back whole, closes; returns what came back. */
export function* echoOnce(host: string, port: number, data: Buffer): Generator<B.Instruction, Buffer, unknown> {
  const sock = tcpv4();
  try {
    yield* connect(sock, { host, port });
    const back = Buffer.alloc(data.length);
    const reader = B.spawn(function* () {
      yield* readExactly(sock, back);
    });
    yield* write(sock, data);
    yield* B.awaitExn(reader);
    return back;
  } finally {
    yield* close(sock);
  }
}

/** A deterministic pattern unique to `seed`. */
export function pattern(seed: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    buf[i] = x & 0xff;
  }
  return buf;
}

/** What `op` threw (it must throw). */
export function* failure(op: () => B.Operation<unknown>): Generator<B.Instruction, NodeJS.ErrnoException, unknown> {
  try {
    yield* op();
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
  throw new Error("expected the operation to fail");
}
