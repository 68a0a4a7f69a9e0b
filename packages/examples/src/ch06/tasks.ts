/**
 * Chapter 6's parallel task: the echo server of a worker domain. Worker
 * domains import this module, so it only defines things.
 */
import * as B from "@bobbin/core";
import type { Address } from "@bobbin/unix";
import { server } from "./echo.js";

/**
 * The book's `server` on a worker domain, listening on `address` beside the
 * other domains' servers (SO_REUSEPORT: first come, first served).
 */
export const serverTask = B.defineTask(import.meta.url, "server", function* (address: Address): Generator<B.Instruction, never, unknown> {
  return yield* server(address, undefined, true);
});
