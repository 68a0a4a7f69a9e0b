/**
 * Chapter 8's parallel task: the echo server of a worker domain. Worker
 * domains import this module, so it only defines things.
 */
import * as B from "@bobbin/core";
import { OwnedSockets, type Socket } from "@bobbin/unix";
import { type ServerContext, serverOrStopAll } from "./server.js";

/** What a worker's server is given: dom0's listening socket and what every server shares. */
export interface WorkerServer extends ServerContext {
  /** The listening socket dom0 bound (it arrives as this domain's own socket over the same OS socket). */
  readonly socket: Socket;
}

/**
 * A worker domain's echo server: accepts on dom0's listening socket, owned
 * here by this task, until the shared stop condition; returns what it did.
 * If it fails, it requests the stop first, so every other domain stops too.
 */
export const serverTask = B.defineTask(import.meta.url, "server", function* (config: WorkerServer) {
  return yield* serverOrStopAll(OwnedSockets.ofSocket(config.socket), config);
});
