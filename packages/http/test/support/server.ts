/** Helpers of the tests of @bobbin/http: a server in a task, raw clients, counting what is left open. */
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { openFds } from "@bobbin/test-support";
import { type Backend, close, connect, read, run, type Socket, tcpv4, write } from "@bobbin/unix";
import { type Handler, type ServeOptions, serve } from "../../src/index.js";

/** A backend under test: its factory, and whether its sockets are the system's (plain Node clients can reach them). */
export interface BackendCase {
  readonly name: string;
  readonly backend: (domain: number) => Backend;
  readonly systemSockets: boolean;
}

/** A server of `serve` running in a task of the caller, and its port. */
export interface Running {
  readonly task: B.Task<void>;
  readonly port: number;
  readonly url: string;
}

/** Starts `serve` in a child task and returns once it listens. */
export function* start(options: Omit<ServeOptions, "port" | "onListening">, handler: Handler): Generator<B.Instruction, Running, unknown> {
  let port = 0;
  const listening = new L.Trigger();
  const task = B.spawn(function* serving() {
    yield* serve(
      {
        ...options,
        port: 0,
        onListening: (address) => {
          port = address.port;
          listening.signal();
        },
      },
      handler,
    );
  });
  yield* listening.wait();
  return { task, port, url: `http://127.0.0.1:${port}` };
}

/** A raw connection to the server, with a request written on it. */
export function* rawRequest(port: number, request: string): Generator<B.Instruction, Socket, unknown> {
  const sock = tcpv4();
  yield* connect(sock, { host: "127.0.0.1", port });
  yield* write(sock, request);
  return sock;
}

/** Reads `sock` to its end (the connection closes after the response: `connection: close`). */
export function* readAll(sock: Socket): Generator<B.Instruction, string, unknown> {
  const buf = Buffer.alloc(16 * 1024);
  let text = "";
  for (let n: number; (n = yield* read(sock, buf)) > 0; ) text += buf.toString("latin1", 0, n);
  yield* close(sock);
  return text;
}

/** Runs `main` on `backend`, and checks that no file descriptor and no Node handle it made is left (the run's own end is awaited). */
export async function leakFree<T>(backend: BackendCase, main: () => Generator<B.Instruction, T, unknown>): Promise<T> {
  const fds = openFds();
  const handles = process.getActiveResourcesInfo().length;
  const value = await run(main, { backend: backend.backend });
  // Node closes what it closes on its next turns (an undici pool's sockets, a server's handle).
  for (let turn = 0; turn < 200 && (openFds() !== fds || process.getActiveResourcesInfo().length > handles); turn++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  if (fds !== null && openFds() !== fds) throw new Error(`file descriptors left open: ${fds} before, ${openFds()} after`);
  const left = process.getActiveResourcesInfo();
  if (left.length > handles) throw new Error(`Node handles left: ${left.join(", ")}`);
  return value;
}
