/**
 * Programs the tests run on simulated hosts: plain `@bobbin/unix` code, as
 * any program would be written. The conformance suite's helpers (one echo
 * connection, payloads) serve here too; expected failures are the workspace's
 * (`@bobbin/test-support`).
 */
import * as B from "@bobbin/core";
import { accept, bindAndListen, close, connect, readExactly, sleep, tcpv4, write } from "@bobbin/unix";
import { echoOnce } from "../../../unix/src/conformance/support.js";

export { pattern } from "../../../unix/src/conformance/support.js";

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

/**
 * A bug that needs one preemption: `writer` sets a flag, yields, and checks
 * it is still its own; `other` yields once, then overwrites it — in the
 * runtime's own order `writer` checks first. `noise` more tasks yield
 * beside them, and it all begins after `delay` seconds.
 */
export function flagRace(noise = 0, delay = 0): () => Generator<B.Instruction, void, unknown> {
  return function* flags() {
    if (delay > 0) yield* sleep(delay);
    let flag = "";
    const writer = B.spawn(function* () {
      flag = "writer";
      yield* B.yieldNow();
      if (flag !== "writer") throw new Error(`overwritten by ${flag}`);
    });
    const other = B.spawn(function* () {
      yield* B.yieldNow();
      flag = "other";
    });
    const busy = Array.from({ length: noise }, () =>
      B.spawn(function* () {
        for (let i = 0; i < 4; i++) yield* B.yieldNow();
      }),
    );
    for (const r of yield* B.awaitAll([writer, other, ...busy])) if (!r.ok) throw r.error;
  };
}
