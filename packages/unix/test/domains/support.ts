/**
 * Helpers of the cross-domain tests, for any backend (the native backend's
 * domain tests use them too): the process's descriptors, and echo clients
 * that check every byte. They use the built packages, as the workers do.
 */

import * as B from "@bobbin/core";
import { openFds as countFds } from "@bobbin/test-support";
import { type Address, close, connect, readExactly, type Socket, sleep, tcpv4, unixSocket, write } from "../../dist/index.js";
import * as F from "./fixtures/tasks.mjs";

/** The process's open descriptors (Linux), less /dev/null, which Node keeps open after its first spawn. */
export function openFds(): number | null {
  return countFds((target) => target === "/dev/null");
}

/** One client: `rounds` round trips of `size` bytes of its own pattern, every byte checked. */
export function* client(addr: Address, seed: number, rounds = 10, size = 1024): Generator<B.Instruction, void, unknown> {
  const sock = "path" in addr ? unixSocket() : tcpv4();
  try {
    yield* connect(sock, addr);
    const out = Buffer.alloc(size);
    const back = Buffer.alloc(size);
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < size; i++) out[i] = (seed * 31 + r * 7 + i) & 0xff;
      yield* write(sock, out);
      yield* readExactly(sock, back);
      if (!back.equals(out)) throw new Error(`client ${seed}: round ${r} came back different`);
    }
  } finally {
    yield* close(sock);
  }
}

/** Runs single clients until `enough()` (every domain meant to has accepted), for at most 10 s. */
export function* warmUp(addr: Address, enough: () => boolean): Generator<B.Instruction, void, unknown> {
  const deadline = performance.now() + 10_000;
  for (let i = 0; !enough() && performance.now() < deadline; i++) {
    yield* B.awaitExn(B.spawn(client, addr, 10_000 + i, 1, 64));
    yield* sleep(0.005);
  }
}

/**
 * The book's parallel server over `sock` (call it in a task): dom0 serves
 * (`Miou.call_cc server`) beside `workers` parallel tasks (`Miou.parallel
 * server domains`), each counting its connections in `counts[domain]`.
 */
export function serveEverywhere(
  sock: Socket,
  workers: number,
): { counts: Int32Array; local: B.Task<never>; remote: B.Task<B.Result<never>[]> } {
  const counts = new Int32Array(new SharedArrayBuffer(4 * (workers + 1)));
  const local = B.spawn(F.serve.body, { sock, counts });
  const remote = B.spawn(function* () {
    return yield* B.parallel(
      F.serve,
      Array.from({ length: workers }, () => ({ sock, counts })),
    );
  });
  return { counts, local, remote };
}
