/**
 * Chapter 6's parallel task: the echo server of a worker domain. Worker
 * domains import this module, so it only defines things.
 */
import * as B from "@bobbin/core";
import type { Socket } from "@bobbin/unix";
import { serve } from "./echo.js";

/**
 * The book's `server` on a worker domain, accepting on the listening socket
 * dom0 bound and gave it (`@bobbin/unix` makes it this domain's own socket
 * over the same OS socket): first come, first served.
 */
export const serverTask = B.defineTask(import.meta.url, "server", function* (socket: Socket): Generator<B.Instruction, never, unknown> {
  return yield* serve(socket);
});
