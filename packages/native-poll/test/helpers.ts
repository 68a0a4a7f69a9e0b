/**
 * What this package's tests share beyond the workspace's (`@bobbin/test-support`):
 * descriptor pairs from the raw system calls, whether io_uring works here, a run on
 * a native backend the test can look at, and byte patterns and reads over sockets.
 */
import type * as B from "@bobbin/core";
import { read, run, type Socket, sleep, Timeout, withTimeout } from "@bobbin/unix";
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

/** Whether the io_uring backend works here, and why not (see `uringSupport`). */
export const uring = uringSupport();

/** Why io_uring tests skip here ("" where they run), for their titles. */
export const noUring = uring.available ? "" : ` (skipped: ${uring.reason})`;

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

/** `length` bytes of a pattern of its own for each seed. */
export function pattern(seed: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) buf[i] = (seed * 131 + i * 7 + (i >> 8)) & 0xff;
  return buf;
}

/** Reads `sock` until the end of the stream (after `pause` seconds); returns everything. */
export function* readToEnd(sock: Socket, pause = 0): Generator<B.Instruction, Buffer, unknown> {
  if (pause > 0) yield* sleep(pause);
  const parts: Buffer[] = [];
  const buf = Buffer.alloc(65536);
  for (let n: number; (n = yield* read(sock, buf)) > 0; ) parts.push(Buffer.from(buf.subarray(0, n)));
  return Buffer.concat(parts);
}

/** A read that finds nothing and times out: on io_uring it leaves the socket's multishot recv armed. */
export function* armRecv(sock: Socket): Generator<B.Instruction, void, unknown> {
  try {
    yield* withTimeout(0.01, read(sock, Buffer.alloc(1)));
    throw new Error("armRecv: the socket had data");
  } catch (e) {
    if (!(e instanceof Timeout)) throw e;
  }
}
