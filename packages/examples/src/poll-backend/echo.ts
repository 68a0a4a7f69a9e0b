/**
 * The poll backend at work: chapter 6's echo server and its clients in one
 * run, every byte checked, and what the poller did to serve them.
 *
 * Each client first waits 10 ms for a greeting the server never sends: its
 * read times out (`withTimeout`), so its suspension point comes back to
 * `select` as cancelled and is forgotten there, as Miou's contract wants.
 */
import * as B from "@bobbin/core";
import {
  bindAndListen,
  close,
  connect,
  getsockname,
  type InetAddress,
  read,
  readExactly,
  run,
  Timeout,
  tcpv4,
  withTimeout,
  write,
} from "@bobbin/unix";
import { serve } from "../ch06/echo.js";
import { pollBackend } from "./backend.js";

/**
 * How much the clients do.
 *
 * @example
 * ```ts
 * const load: EchoLoad = { clients: 100, messages: 10, size: 64 };
 * ```
 */
export interface EchoLoad {
  readonly clients: number;
  readonly messages: number;
  readonly size: number;
}

/**
 * What happened.
 *
 * @example
 * ```ts
 * const { bytes, stats } = await echoOnPoll(load);
 * ```
 */
export interface EchoReport extends EchoLoad {
  /** Bytes echoed back and checked, all clients together. */
  readonly bytes: number;
  /** Clients whose greeting read timed out (all of them, unless the server spoke first). */
  readonly timedOut: number;
  readonly seconds: number;
}

/** A client: waits for a greeting in vain, then sends `messages` messages of `size` bytes and checks each echo. */
function* client(port: number, id: number, load: EchoLoad): Generator<B.Instruction, [number, boolean], unknown> {
  const sock = tcpv4();
  try {
    yield* connect(sock, { host: "127.0.0.1", port });
    let timedOut = false;
    try {
      yield* withTimeout(0.01, read(sock, Buffer.alloc(1)));
    } catch (error) {
      if (!(error instanceof Timeout)) throw error;
      timedOut = true;
    }
    const out = Buffer.alloc(load.size);
    const back = Buffer.alloc(load.size);
    for (let m = 0; m < load.messages; m++) {
      out.fill(`${id}:${m};`);
      yield* write(sock, out);
      yield* readExactly(sock, back);
      if (!back.equals(out)) throw new Error(`client ${id}: message ${m} came back different`);
    }
    return [load.messages * load.size, timedOut];
  } finally {
    yield* close(sock);
  }
}

/**
 * Runs the echo server and `clients` clients, `clients` at once, on the poll
 * backend; returns what they did.
 *
 * @example
 * ```ts
 * const r = await echoOnPoll({ clients: 100, messages: 10, size: 64 });
 * r.bytes;      // 64,000: every byte echoed and checked
 * r.timedOut;   // 100: no server speaks first
 * ```
 * @throws RangeError when a count is not a positive integer; whatever a client or the server throws.
 */
export async function echoOnPoll(load: EchoLoad): Promise<EchoReport> {
  for (const [what, n] of Object.entries(load)) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`echoOnPoll: ${what} must be an integer ≥ 1, got ${n}`);
  }
  const t0 = performance.now();
  return run(
    function* () {
      const server = tcpv4();
      yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
      const { port } = getsockname(server) as InetAddress;
      const serving = B.spawn(serve, server);
      const results = yield* B.awaitAll(Array.from({ length: load.clients }, (_, id) => B.spawn(client, port, id, load)));
      yield* B.cancel(serving);
      let bytes = 0;
      let timedOut = 0;
      for (const r of results) {
        if (!r.ok) throw r.error;
        bytes += r.value[0];
        if (r.value[1]) timedOut++;
      }
      return { ...load, bytes, timedOut, seconds: (performance.now() - t0) / 1000 };
    },
    { backend: pollBackend },
  );
}
