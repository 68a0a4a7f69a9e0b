/**
 * One request per connection, as the simulated services of these examples
 * speak: a client connects, writes its request, half-closes, and reads the
 * answer to its end; the server reads the request to its end, answers, and
 * closes. A client that goes away mid-request is its own business.
 */
import * as B from "@bobbin/core";
import { accept, bindAndListen, close, connect, read, type Socket, shutdown, tcpv4, withTimeout, write } from "@bobbin/unix";

/** Reads everything until the peer ends its stream. */
export function* readAll(sock: Socket): Generator<B.Instruction, string, unknown> {
  const buf = Buffer.alloc(1024);
  let text = "";
  for (let n: number; (n = yield* read(sock, buf)) > 0; ) text += buf.toString("utf8", 0, n);
  return text;
}

/** Whether `error` says the peer went away. */
function peerGone(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "ECONNRESET" || code === "EPIPE";
}

/**
 * Serves `port` on every address, forever: each connection in a task of its
 * own, its request given to `answer`, whose reply (none when null) goes back.
 */
export function* serveEach(
  port: number,
  answer: (request: string) => Generator<B.Instruction, string | null, unknown>,
): Generator<B.Instruction, never, unknown> {
  function* serve(client: Socket): Generator<B.Instruction, void, unknown> {
    try {
      const reply = yield* answer(yield* readAll(client));
      if (reply !== null) yield* write(client, reply);
    } catch (error) {
      if (!peerGone(error)) throw error;
    } finally {
      yield* close(client);
    }
  }
  const server = tcpv4();
  yield* bindAndListen(server, { host: "0.0.0.0", port });
  const clients = B.orphans<void>();
  for (;;) {
    for (let t = B.care(clients); t; t = B.care(clients)) yield* B.awaitExn(t);
    const [client] = yield* accept(server);
    B.spawn({ orphans: clients }, serve, client);
  }
}

/**
 * Sends `text` to `host:port` and returns the whole answer, or null when
 * none comes within `patience` seconds (the server down, cut off from the
 * client, or gone meanwhile).
 */
export function* request(host: string, port: number, text: string, patience: number): Generator<B.Instruction, string | null, unknown> {
  const sock = tcpv4();
  try {
    return yield* withTimeout(patience, function* () {
      yield* connect(sock, { host, port });
      yield* write(sock, text);
      shutdown(sock, "send");
      return yield* readAll(sock);
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ETIMEDOUT" || code === "ECONNREFUSED" || peerGone(error)) return null;
    throw error;
  } finally {
    yield* close(sock);
  }
}
