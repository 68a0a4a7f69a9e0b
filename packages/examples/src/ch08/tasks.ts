/**
 * Chapter 8's parallel task: the echo server of a worker domain. Worker
 * domains import this module, so it only defines things.
 */
import * as B from "@bobbin/core";
import { type Address, bindAndListen, close, tcpv4 } from "@bobbin/unix";
import { serverOrStopAll } from "./server.js";
import { Shutdown } from "./shutdown.js";

/** What a worker's server is told (structured-cloned to its domain). */
export interface WorkerServer {
  /** The address dom0's server is bound to (its real port when it asked for port 0). */
  readonly address: Address;
  /** The run's shared stop flag (see `Shutdown`). */
  readonly stop: Int32Array;
  readonly verbose: boolean;
}

/**
 * A worker domain's echo server: binds the same address as the others
 * (SO_REUSEPORT: the system shares the connections out), relays the stop
 * flag to this domain's condition, and returns what it did. If it fails, it
 * raises the stop flag first, so every other domain stops too.
 */
export const serverTask = B.defineTask(import.meta.url, "server", function* (config: WorkerServer) {
  const shutdown = new Shutdown(config.stop);
  const relay = B.spawn(function* () {
    yield* shutdown.relay();
  });
  try {
    return yield* serverOrStopAll({ address: config.address, shutdown, verbose: config.verbose, reusePort: true });
  } finally {
    yield* B.cancel(relay);
  }
});

/**
 * Whether this domain can listen on `address` beside another domain: binds
 * it with SO_REUSEPORT, then closes it. Used by `probe.ts`.
 */
export const listenProbe = B.defineTask(import.meta.url, "listenProbe", function* (address: Address) {
  const socket = tcpv4();
  try {
    yield* bindAndListen(socket, address, { reusePort: true } as object);
  } finally {
    yield* close(socket);
  }
});
