/**
 * `toStream` over the backend's sockets: Node's own `http` server and client,
 * and `tls`, run over them; back-pressure, half-close, errors, destruction,
 * cancellation and idle timeouts. Both ends of every connection are the
 * backend's sockets (a simulated network serves them too), except where a
 * plain Node peer is needed.
 */
import * as http from "node:http";
import * as net from "node:net";
import * as tls from "node:tls";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import {
  close,
  connect,
  getsockname,
  type InetAddress,
  read,
  SocketClosed,
  type SocketStream,
  sleep,
  tcpv4,
  toStream,
  udpv4,
} from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";
import { connectedPair, LO4, pattern, thrown } from "./support.js";

/** A connection of the backend's sockets, each end a stream: `[server's, client's]`. */
function* streamPair(): Generator<B.Instruction, [SocketStream, SocketStream], unknown> {
  const [client, served, listener] = yield* connectedPair();
  yield* close(listener);
  // The client's own address is the server's peer.
  return [toStream(served, { peer: getsockname(client) }), toStream(client)];
}

/**
 * Waits for `event` of `emitter`, listened for from now on (so that an event
 * that comes before the task waits is not missed); an `'error'` first fails
 * the wait, except for `'close'`, which comes after it.
 */
function soon<T extends unknown[]>(emitter: NodeJS.EventEmitter, event: string): () => B.Operation<T> {
  const happened = new Promise<T>((resolve, reject) => {
    emitter.once(event, (...args: unknown[]) => resolve(args as T));
    if (event !== "error" && event !== "close") emitter.once("error", reject);
  });
  happened.catch(() => {}); // the error is the waiting task's, when it waits
  return () => B.promise(() => happened);
}

/** Everything `stream` gives until its end. */
function readAllOf(stream: NodeJS.ReadableStream): () => B.Operation<Buffer> {
  const chunks: Buffer[] = [];
  stream.on("data", (c: Buffer) => chunks.push(c));
  const ended = soon(stream as NodeJS.EventEmitter, "end");
  return () =>
    (function* () {
      yield* ended();
      return Buffer.concat(chunks);
    })();
}

/** Writes `chunks` corked together, and waits until the stream has sent them. */
function writeBatch(stream: SocketStream, chunks: readonly [string | Buffer, BufferEncoding?][]): B.Operation<void> {
  return B.promise(
    () =>
      new Promise<void>((resolve, reject) => {
        stream.cork();
        chunks.forEach(([chunk, encoding], i) => {
          const last = i === chunks.length - 1;
          stream.write(chunk, encoding ?? "utf8", last ? (error) => (error ? reject(error) : resolve()) : undefined);
        });
        stream.uncork();
      }),
  );
}

/** Node's setImmediate, as it is when the suite loads (a simulation replaces the global while it runs). */
const nodeSetImmediate = globalThis.setImmediate;

/**
 * Waits for a turn of Node's loop: Node's http and tls end their own
 * cleanup there (setImmediate) after a connection closed.
 */
function nodeTurn(): B.Operation<void> {
  return B.promise(() => new Promise<void>((resolve) => nodeSetImmediate(resolve)));
}

const PSK = Buffer.from("b0bb1ab0bb1ab0bb1ab0bb1ab0bb1ab0", "hex");
const TLS_OPTIONS = { ciphers: "PSK-AES128-GCM-SHA256", minVersion: "TLSv1.2", maxVersion: "TLSv1.2" } as const;

/** @internal */
export function streamTests(suite: Suite): void {
  describe("toStream: Node streams over the backend's sockets", () => {
    it("Node's http server and client over it: keep-alive requests with bodies, the peer's address", async () => {
      const replies = await suite.leakFree(function* () {
        const [served, client] = yield* streamPair();
        const server = http.createServer((req, res) => {
          let length = 0;
          req.on("data", (c: Buffer) => {
            length += c.length;
          });
          req.on("end", () => res.end(JSON.stringify({ method: req.method, url: req.url, length, from: req.socket.remoteAddress })));
        });
        server.emit("connection", served);
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        (agent as unknown as { createConnection(): net.Socket }).createConnection = () => client as unknown as net.Socket;
        const got: unknown[] = [];
        for (const size of [0, 100_000, 1_000_000]) {
          const response = yield* B.promise(
            () =>
              new Promise<string>((resolve, reject) => {
                const req = http.request({ host: "bobbin.test", path: `/upload/${size}`, method: "POST", agent }, (res) => {
                  let text = "";
                  res.setEncoding("utf8");
                  res.on("data", (c: string) => {
                    text += c;
                  });
                  res.on("end", () => resolve(text));
                });
                req.on("error", reject);
                req.end(pattern(size, size));
              }),
          );
          got.push(JSON.parse(response));
        }
        agent.destroy(); // the client's stream: Node's server ends its side in turn
        yield* B.awaitExn(client.task);
        yield* B.awaitExn(served.task);
        expect(served.socket.state).toBe("closed");
        yield* nodeTurn();
        return got;
      });
      expect(replies).toEqual([0, 100_000, 1_000_000].map((length) => ({ method: "POST", url: `/upload/${length}`, length, from: LO4 })));
    });

    it("tls over it, both ends (TLS 1.2 with a pre-shared key)", async () => {
      const reply = await suite.leakFree(function* () {
        const [served, client] = yield* streamPair();
        const server = tls.createServer({ ...TLS_OPTIONS, pskCallback: (_s, id) => (id === "bobbin" ? PSK : null) });
        const accepted = soon<[tls.TLSSocket]>(server, "secureConnection");
        server.emit("connection", served);
        const secureClient = tls.connect({
          ...TLS_OPTIONS,
          socket: client,
          pskCallback: () => ({ psk: PSK, identity: "bobbin" }),
          checkServerIdentity: () => undefined,
        });
        const all = readAllOf(secureClient);
        const clientClosed = soon(secureClient, "close");
        yield* soon(secureClient, "secureConnect")();
        const [secureServer] = yield* accepted();
        const serverClosed = soon(secureServer, "close");
        secureServer.on("data", (d: Buffer) => secureServer.end(`pong:${d}`));
        secureClient.end("ping");
        const text = (yield* all()).toString();
        secureServer.destroy();
        secureClient.destroy();
        yield* serverClosed();
        yield* clientClosed();
        yield* B.awaitExn(served.task);
        yield* B.awaitExn(client.task);
        yield* nodeTurn();
        return text;
      });
      expect(reply).toBe("pong:ping");
    });

    it("back-pressure: a consumer that stops reading stops the socket's reads; every byte arrives once it reads again", async () => {
      const [buffered, bound, got] = await suite.leakFree(function* () {
        const [served, client] = yield* streamPair();
        const data = pattern(7, 4 * 1024 * 1024);
        const chunks: Buffer[] = [];
        served.on("data", (c: Buffer) => {
          chunks.push(c);
          served.pause(); // the consumer stops after its first chunk
        });
        const ended = soon(served, "end");
        client.end(data);
        yield* sleep(0.2);
        const held = served.readableLength;
        served.removeAllListeners("data");
        served.on("data", (c: Buffer) => chunks.push(c));
        served.resume();
        yield* ended();
        served.destroy();
        client.destroy();
        yield* B.awaitExn(served.task);
        yield* B.awaitExn(client.task);
        return [held, served.readableHighWaterMark + 64 * 1024, Buffer.concat(chunks).equals(data)];
      });
      expect(buffered).toBeLessThanOrEqual(bound);
      expect(got).toBe(true);
    });

    it("half-close: the peer's end ends the readable side only; end() shuts the socket down for sending", async () => {
      const [serverGot, clientGot] = await suite.leakFree(function* () {
        const [served, client] = yield* streamPair();
        const serverAll = readAllOf(served);
        const clientAll = readAllOf(client);
        client.end("request");
        const request = yield* serverAll();
        expect(served.writable).toBe(true);
        served.end(`reply to ${request}`);
        const reply = yield* clientAll();
        yield* B.awaitExn(served.task); // both sides done: the streams close themselves
        yield* B.awaitExn(client.task);
        return [request.toString(), reply.toString()];
      });
      expect([serverGot, clientGot]).toEqual(["request", "reply to request"]);
    });

    it("writes: strings in their encodings and bytes, alone, corked together, and larger than one write, arrive in order", async () => {
      const [got, expected] = await suite.leakFree(function* () {
        const [served, client] = yield* streamPair();
        const all = readAllOf(served);
        const large = "ü".repeat(50_000); // 100,000 bytes in UTF-8
        // Each batch is written corked and sent before the next: one chunk is one `_write`; several are
        // one `_writev`, joined into one write of the socket, or too large to join.
        const batches: [string | Buffer, BufferEncoding?][][] = [
          [["alone: "]],
          [["dmlh", "base64"]],
          [["héllo ", "utf8"], ["aGk=", "base64"], [pattern(3, 1000)], ["ff00", "hex"], ["café", "latin1"]],
          [[large], [pattern(5, 70_000)]],
        ];
        for (const batch of batches) yield* writeBatch(client, batch);
        client.end("!");
        const bytes = ([chunk, encoding]: [string | Buffer, BufferEncoding?]) =>
          typeof chunk === "string" ? Buffer.from(chunk, encoding) : chunk;
        const sent = Buffer.concat([...batches.flat().map(bytes), Buffer.from("!")]);
        const received = yield* all();
        served.destroy();
        client.destroy();
        yield* B.awaitExn(served.task);
        yield* B.awaitExn(client.task);
        return [received, sent];
      });
      expect(got.equals(expected)).toBe(true);
    });

    it("a write the socket can take at once is handed over in write() itself on a backend with tryWrite; it arrives either way", async () => {
      const outcome = await suite.leakFree(function* () {
        const [served, client] = yield* streamPair();
        const all = readAllOf(served);
        const direct = client.socket.backend.tryWrite !== undefined;
        client.write("at once");
        const waiting = client.writableLength; // bytes still waiting for the writer task
        client.end();
        const received = yield* all();
        served.destroy();
        client.destroy();
        yield* B.awaitExn(served.task);
        yield* B.awaitExn(client.task);
        return { direct, waiting, received: received.toString() };
      });
      expect(outcome).toEqual({ direct: outcome.direct, waiting: outcome.direct ? 0 : 7, received: "at once" });
    });

    it("destroy() closes the socket: the peer reads its end, and the task ends", async () => {
      await suite.leakFree(function* () {
        const [sock, served, listener] = yield* connectedPair();
        const stream = toStream(served);
        const closed = soon(stream, "close");
        stream.destroy();
        yield* closed();
        expect(served.state).toBe("closed");
        expect(yield* read(sock, Buffer.alloc(8))).toBe(0);
        yield* B.awaitExn(stream.task);
        yield* close(sock);
        yield* close(listener);
      });
    });

    it("cancelling the task that made it destroys the stream and closes the socket", async () => {
      await suite.leakFree(function* () {
        const [sock, served, listener] = yield* connectedPair();
        let stream: SocketStream | undefined;
        const made = new L.Trigger();
        const owner = B.spawn(function* () {
          stream = toStream(served);
          stream.resume();
          made.signal();
          yield* new L.Trigger().wait();
        });
        yield* made.wait();
        const closed = soon(stream!, "close");
        yield* B.cancel(owner);
        yield* closed();
        expect(served.state).toBe("closed");
        expect(stream!.task.status).toBe("cancelled");
        expect(yield* read(sock, Buffer.alloc(8))).toBe(0);
        yield* close(sock);
        yield* close(listener);
      });
    });

    it("a stream whose task is cancelled before it ever ran is closed all the same", async () => {
      await suite.leakFree(function* () {
        const [sock, served, listener] = yield* connectedPair();
        const orphans = B.orphans<void>();
        const stream = toStream(served, { orphans });
        const closed = soon(stream, "close");
        yield* B.cancel(B.take(orphans)!); // queued, never started
        yield* closed();
        expect(served.state).toBe("closed");
        yield* close(sock);
        yield* close(listener);
      });
    });

    it.skipIf(!suite.systemSockets)("a failing socket destroys the stream with its error ('error', then 'close')", async () => {
      const error = await suite.leakFree(function* () {
        // a plain Node server that resets the connection once it has read something
        const rude = net.createServer((c) => c.once("data", () => c.resetAndDestroy()));
        rude.listen(0, LO4);
        yield* soon(rude, "listening")();
        const sock = tcpv4();
        yield* connect(sock, { host: LO4, port: (rude.address() as net.AddressInfo).port });
        const stream = toStream(sock);
        const failed = soon<[NodeJS.ErrnoException]>(stream, "error");
        const closed = soon(stream, "close");
        stream.resume();
        stream.write("hello?");
        const [e] = yield* failed();
        yield* closed();
        yield* B.awaitExn(stream.task); // the error was the stream's, not the task's
        rude.close();
        yield* soon(rude, "close")();
        yield* nodeTurn(); // a net.Server's 'close' comes before its handle is gone
        return e;
      });
      expect(["ECONNRESET", "EPIPE"]).toContain(error.code);
    });

    it("setTimeout: 'timeout' once idle for that long on the backend's clock; traffic postpones it; 0 disables it", async () => {
      const [during, after, disabled] = await suite.leakFree(function* () {
        const [served, client] = yield* streamPair();
        let timeouts = 0;
        served.resume();
        // Ticks come ten times as often as the timeout: a loaded machine that stretches a
        // 50 ms sleep to the whole timeout is rare; one that stretches it to 100 ms is not.
        served.setTimeout(500, () => timeouts++);
        for (let i = 0; i < 5; i++) {
          yield* sleep(0.05);
          client.write("tick"); // moved bytes: the timer starts again
        }
        const whileBusy = timeouts;
        yield* sleep(0.8);
        const onceIdle = timeouts;
        served.setTimeout(0);
        yield* sleep(0.6);
        const off = timeouts;
        served.destroy();
        client.destroy();
        yield* B.awaitExn(served.task);
        yield* B.awaitExn(client.task);
        return [whileBusy, onceIdle, off];
      });
      expect([during, after, disabled]).toEqual([0, 1, 1]);
    });

    it("what net.Socket has: addresses, and the no-ops Node's http and tls call", async () => {
      const seen = await suite.leakFree(function* () {
        const [served, client] = yield* streamPair();
        const local = getsockname(served.socket) as InetAddress;
        const view = {
          remote: [served.remoteAddress, served.remoteFamily, typeof served.remotePort],
          local: [served.localAddress, served.localPort === local.port, served.address()],
          noPeer: [client.remoteAddress, client.remoteFamily],
          chained: [served.setNoDelay(true), served.setKeepAlive(true, 1000), served.ref(), served.unref()].every((r) => r === served),
        };
        served.destroy();
        client.destroy();
        yield* B.awaitExn(served.task);
        yield* B.awaitExn(client.task);
        return { ...view, closedAddress: served.address() };
      });
      expect(seen).toEqual({
        remote: [LO4, "IPv4", "number"],
        local: [LO4, true, { address: LO4, family: "IPv4", port: expect.any(Number) }],
        noPeer: [undefined, undefined],
        chained: true,
        closedAddress: {},
      });
    });

    it("takes a connected stream socket, once", async () => {
      await suite.leakFree(function* () {
        const udp = udpv4();
        expect(String(thrown(() => toStream(udp)))).toMatch(/needs a stream socket/);
        const fresh = tcpv4();
        expect(String(thrown(() => toStream(fresh)))).toMatch(/needs a connected socket/);
        yield* close(fresh);
        expect(thrown(() => toStream(fresh))).toBeInstanceOf(SocketClosed);
        yield* close(udp);
        const [served, client] = yield* streamPair();
        expect(String(thrown(() => toStream(served.socket)))).toMatch(/has a stream already/);
        served.destroy();
        client.destroy();
        yield* B.awaitExn(served.task);
        yield* B.awaitExn(client.task);
      });
    });
  });
}
