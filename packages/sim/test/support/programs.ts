/**
 * Programs the tests run on simulated hosts: plain `@bobbin/unix` code, as
 * any program would be written. The conformance suite's helpers (one echo
 * connection, payloads, expected failures) serve here too.
 */
import * as B from "@bobbin/core";
import { accept, bindAndListen, close, connect, readExactly, tcpv4, write } from "@bobbin/unix";
import { echoOnce } from "../../../unix/src/conformance/support.js";

export { failure, pattern } from "../../../unix/src/conformance/support.js";

/** A TCP echo server on `port` of every address, serving each client in its own task, forever. */
export function echoServer(port: number): () => Generator<B.Instruction, never, unknown> {
  return function* echoServer() {
    const server = tcpv4();
    yield* bindAndListen(server, { host: "0.0.0.0", port });
    const clients = B.orphans<number>();
    for (;;) {
      for (let t = B.care(clients); t; t = B.care(clients)) yield* B.awaitTask(t);
      const [client] = yield* accept(server);
      B.spawn({ orphans: clients }, echoOnce, client, 4096);
    }
  };
}

/** Connects to `host:port`, sends `data`, reads it back whole, closes; returns what came back. */
export function* echoThrough(host: string, port: number, data: Buffer): Generator<B.Instruction, Buffer, unknown> {
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
