/**
 * How the libuv backend gets a descriptor of its own for a listening socket
 * of another domain.
 *
 * Node cannot `dup(2)` a descriptor, and two libuv handles over one
 * descriptor are not an option: closing either closes the descriptor under
 * the other (a worker's handle is closed when the worker stops, at the
 * latest), and the number may then be reused by any thread — libuv aborts,
 * or worse, closes someone else's file. So the receiving domain asks a
 * short-lived Node child process for a duplicate: the child inherits the
 * descriptor (as its fd 3), opens it without listening (it accepts nothing)
 * and sends it back over its IPC channel; the descriptor that arrives
 * (`SCM_RIGHTS`) is a new one, owned by this thread. It costs one Node start
 * (≈ 0.1 s) per listening socket and domain, once: sockets are cached per
 * domain (see share.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";

/** The child: one message with the handle over fd 3, then exit when the parent lets go. */
const RELAY = `"use strict";
const net = require("node:net");
setTimeout(() => process.exit(3), 30000).unref();
process.on("disconnect", () => process.exit(0));
let handle;
try {
  handle = new net.Socket({ fd: 3, readable: false, writable: false })._handle;
} catch (error) {
  process.send({ error: String((error && (error.code || error.message)) || error) }, () => process.exit(1));
}
if (handle) process.send("@bobbin/unix descriptor", handle, (error) => { if (error) process.exit(2); });`;

/** The message the relay sends with the descriptor. */
export const RELAY_MESSAGE = "@bobbin/unix descriptor";

/**
 * Starts a relay for `fd`. When `spawn` returns, the child holds its own
 * copy of the descriptor (libuv waits for the child's exec), so the caller
 * may let the owner close `fd` from then on.
 * @throws the error of `spawn` when the child could not be started synchronously.
 */
export function spawnRelay(fd: number): ChildProcess {
  const env = { ...process.env };
  // The relay is plain Node: no preloads, and not a cluster worker.
  delete env.NODE_OPTIONS;
  delete env.NODE_UNIQUE_ID;
  return spawn(process.execPath, ["-e", RELAY], {
    stdio: ["ignore", "ignore", "ignore", fd, "ipc"],
    env,
    windowsHide: true,
    serialization: "json",
  });
}
