import { existsSync, readdirSync, readlinkSync } from "node:fs";
import type * as B from "@bobbin/core";
import { accept, bindAndListen, connect, getsockname, run, type Socket, tcpv4 } from "@bobbin/unix";
import { syscalls } from "../src/backend/index.js";
import { type NativeBackend, nativeBackend, uringSupport } from "../src/index.js";

/** A non-blocking pipe, as numbers (throws on failure). */
export function pipe(): [number, number] {
  const p = syscalls.pipe();
  if (typeof p === "number") throw new Error(`pipe failed: ${p}`);
  return p;
}

/** A connected pair of non-blocking Unix sockets. */
export function socketpair(type: "stream" | "dgram" = "stream"): [number, number] {
  const p = syscalls.socketpair(type);
  if (typeof p === "number") throw new Error(`socketpair failed: ${p}`);
  return p;
}

/** Lets Node's loop turn (I/O callbacks run). */
export function turn(ms = 5): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `cond` every few ms until true, or fails after `ms`. */
export async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await turn(2);
  }
}

/** Open fds of this process (Linux), to check for leaks. */
export function openFds(): number {
  return readdirSync("/proc/self/fd").length;
}

/** Open fds of this process whose target matches `kind` (e.g. "eventpoll", "socket"). */
export function openFdsOf(kind: string): number {
  let n = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).includes(kind)) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

/** Whether this process can list its fds (`/proc/self/fd`: Linux); tests that count them skip elsewhere. */
export const procFds = existsSync("/proc/self/fd");

/** Why fd-counting tests skip here ("" where they run). */
export const noProcFds = procFds ? "" : ` (skipped: no /proc/self/fd on ${process.platform} to count fds with)`;

/** Whether the io_uring backend works here, and why not (see `uringSupport`). */
export const uring = uringSupport();

/** Why io_uring tests skip here ("" where they run), for their titles. */
export const noUring = uring.available ? "" : ` (skipped: ${uring.reason})`;

/** In a run: a connected pair of TCP sockets on loopback (the listener, the server side, the client side). */
export function* pair(): Generator<B.Instruction, [Socket, Socket, Socket], unknown> {
  const server = tcpv4();
  yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
  const client = tcpv4();
  yield* connect(client, getsockname(server));
  const [conn] = yield* accept(server);
  return [server, conn, client];
}

/** Runs `main` on a native backend it is given (to look at its poller, say). */
export function runNative<T>(main: (backend: NativeBackend) => Generator<B.Instruction, T, unknown>): Promise<T> {
  let backend!: NativeBackend;
  return run(
    function* () {
      return yield* main(backend);
    },
    { backend: () => (backend = nativeBackend()) },
  );
}
