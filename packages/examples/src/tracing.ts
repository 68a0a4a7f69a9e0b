/**
 * A server's task tree as an OpenTelemetry trace: an echo server on
 * loopback serves a few clients of the same program, while every task
 * becomes a span (`@bobbin/opentelemetry`'s `traceTasks`) printed by the OpenTelemetry SDK's
 * console exporter as it ends:
 *
 *     node dist/tracing.js [--clients n]
 *
 * The spans share one trace: `main` is the root, `server` and the `client`s
 * its children, and each `handler` a child of `server`. Point the provider
 * at an OTLP exporter instead of the console one to see the same tree in
 * Jaeger or Zipkin.
 */
import { parseArgs } from "node:util";
import * as B from "@bobbin/core";
import { traceTasks } from "@bobbin/opentelemetry";
import { accept, bindAndListen, close, connect, getsockname, type InetAddress, read, run, type Socket, tcpv4, write } from "@bobbin/unix";
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

const { values } = parseArgs({ options: { clients: { type: "string", default: "2" } } });
const clients = Number(values.clients);
if (!Number.isInteger(clients) || clients < 1) throw new RangeError(`--clients must be an integer ≥ 1, got ${values.clients}`);

const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] });
trace.setGlobalTracerProvider(provider);
const stopTracing = traceTasks(trace.getTracer("@bobbin/examples"));

/** Echoes what the client sends until it closes its side. */
function* handler(sock: Socket): Generator<B.Instruction, void, unknown> {
  const buf = Buffer.alloc(64);
  try {
    for (let n = yield* read(sock, buf); n > 0; n = yield* read(sock, buf)) yield* write(sock, buf, 0, n);
  } finally {
    yield* close(sock);
  }
}

/** Accepts `count` connections, a handler task each, and waits for them. */
function* server(listening: Socket, count: number): Generator<B.Instruction, void, unknown> {
  const handlers: B.Task<void>[] = [];
  for (let i = 0; i < count; i++) {
    const [sock] = yield* accept(listening);
    handlers.push(B.spawn({ name: "handler" }, handler, sock));
  }
  yield* B.awaitAll(handlers);
}

/** Sends one line and reads its echo. */
function* client(port: number, line: string): Generator<B.Instruction, string, unknown> {
  const sock = tcpv4();
  try {
    yield* connect(sock, { host: "127.0.0.1", port });
    yield* write(sock, line);
    const buf = Buffer.alloc(64);
    return buf.toString("utf8", 0, yield* read(sock, buf));
  } finally {
    yield* close(sock);
  }
}

const echoed = await run(function* main() {
  const listening = tcpv4();
  try {
    yield* bindAndListen(listening, { host: "127.0.0.1", port: 0 });
    const { port } = getsockname(listening) as InetAddress;
    const serving = B.spawn({ name: "server" }, server, listening, clients);
    const asking = Array.from({ length: clients }, (_, i) => B.spawn({ name: "client" }, client, port, `hello ${i + 1}`));
    const replies = yield* B.awaitAll(asking);
    yield* B.awaitExn(serving);
    return replies.map((r) => (r.ok ? r.value : String(r.error)));
  } finally {
    yield* close(listening);
  }
});
stopTracing();
await provider.shutdown();
console.log(`echoed: ${JSON.stringify(echoed)}`);
