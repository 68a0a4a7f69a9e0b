/**
 * Running a Bobbin server in this process for a test: start it, get its
 * port, drive it with clients, stop it (its task is cancelled) and check
 * that it released everything.
 */
import * as B from "@bobbin/core";
import { type Address, type Backend, libuv, run } from "@bobbin/unix";

/** The backends to test with: libuv always, the native one when its addon is built. */
export async function backends(): Promise<[string, (domain: number) => Backend][]> {
  const list: [string, (domain: number) => Backend][] = [["libuv", libuv]];
  try {
    const native = await import("@bobbin/native-poll");
    if (native.nativeAvailable()) list.push(["native", native.nativeBackend]);
  } catch {
    // not built: libuv only
  }
  return list;
}

/** A server running in a `run` of this process. */
export interface RunningServer {
  readonly port: number;
  /** Cancels the server task and waits until the run has ended (its sockets are closed by then). */
  stop(): Promise<void>;
}

/** A server body: calls `onListening` once it listens. */
export type ServerBody = (onListening: (address: Address) => void) => Generator<B.Instruction, unknown, unknown>;

/**
 * Runs `server` (listening on `127.0.0.1:0`, so the system picks the port)
 * until `stop()`, with `domains` worker domains for its parallel tasks (by
 * default `run`'s). A server that fails before `stop()` makes `stop()` reject.
 */
export async function startServer(
  server: ServerBody,
  backend: (domain: number) => Backend = libuv,
  domains?: number,
): Promise<RunningServer> {
  let listening!: (address: Address) => void;
  const ready = new Promise<Address>((resolve) => (listening = resolve));
  let requestStop!: () => void;
  const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));
  const done = run(
    function* () {
      const s = B.spawn(function* () {
        return yield* server(listening);
      });
      const stopper = B.spawn(function* () {
        yield* B.promise(() => stopRequested);
      });
      const first = yield* B.awaitFirst<unknown>([s, stopper]); // the loser is cancelled
      if (!first.ok) throw first.error;
    },
    domains === undefined ? { backend } : { backend, domains },
  );
  const address = await Promise.race([ready, done.then(() => Promise.reject(new Error("the server ended before it listened")))]);
  if ("path" in address) throw new TypeError("startServer: expected a TCP server");
  return {
    port: address.port,
    stop: async () => {
      requestStop();
      await done;
    },
  };
}
