/**
 * Closing a socket under the operations waiting on it: each one fails with
 * `SocketClosed`, so that no task believes a wait ended well (data read,
 * bytes sent, a connection made) when the socket was closed under it.
 */
import * as B from "@bobbin/core";
import {
  accept,
  bindAndListen,
  close,
  connect,
  getsockname,
  type InetAddress,
  read,
  recvfrom,
  type Socket,
  SocketClosed,
  sendto,
  sleep,
  Timeout,
  tcpv4,
  udpv4,
  withTimeout,
  write,
} from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";
import { stuckListener } from "./peers.js";
import { connectedPair, failure, LO4, loopbackListener } from "./support.js";

/** How long a waiter may take to hear that its socket was closed. */
const WAKE_SECONDS = 5;

/**
 * Runs `op` in a task until it waits (`settle` lets it start and park),
 * closes `sock` from this task, and returns how the waiting task ended.
 */
function* closeUnder(
  what: string,
  sock: Socket,
  op: () => B.Operation<unknown>,
  settle: () => B.Operation<void> = () => sleep(0.05),
): Generator<B.Instruction, B.Result<unknown>, unknown> {
  const waiter = B.spawn(function* () {
    yield* op();
    return `${what} returned`;
  });
  yield* settle();
  expect(waiter.status, `${what} should be waiting`).toBe("pending");
  yield* close(sock);
  try {
    return yield* withTimeout(WAKE_SECONDS, B.awaitTask(waiter));
  } catch (error) {
    if (!(error instanceof Timeout)) throw error;
    yield* B.cancel(waiter);
    throw new Error(`${what} still waited ${WAKE_SECONDS} s after its socket was closed`);
  }
}

/** The waiting task failed with `SocketClosed`. */
function expectClosed(r: B.Result<unknown>): void {
  expect(r.ok ? r.value : r.error, "the waiting operation fails with SocketClosed once its socket is closed").toBeInstanceOf(SocketClosed);
}

/** @internal */
export function closingTests(suite: Suite): void {
  describe("closing in a withTimeout scope whose deadline passed", () => {
    it("close still closes and returns; the next I/O of the scope throws the Timeout", async () => {
      await suite.leakFree(function* () {
        const [sock, peer, server] = yield* connectedPair();
        const steps: string[] = [];
        const error = yield* failure(() =>
          withTimeout(0.02, function* () {
            try {
              yield* read(sock, Buffer.alloc(1)); // nothing comes: the deadline passes here
            } catch (e) {
              steps.push((e as Error).name);
            }
            yield* close(sock);
            steps.push(`close returned, the socket ${sock.state}`);
            yield* read(peer, Buffer.alloc(1));
            steps.push("read in the expired scope returned");
          }),
        );
        expect(error, "the scope's deadline passed: its next I/O throws Timeout").toBeInstanceOf(Timeout);
        expect(steps, "close in an expired scope still closes and returns; the Timeout comes from the next operation").toEqual([
          "Timeout",
          "close returned, the socket closed",
        ]);
        // The peer sees the end of the stream: the connection was really closed.
        expect(
          yield* withTimeout(WAKE_SECONDS, read(peer, Buffer.alloc(1))),
          "the peer sees the end of the stream: the socket was really closed",
        ).toBe(0);
        for (const s of [peer, server]) yield* close(s);
      });
    });

    it("a close in a finally block closes the socket; the Timeout goes on", async () => {
      await suite.leakFree(function* () {
        const [sock, peer, server] = yield* connectedPair();
        const error = yield* failure(() =>
          withTimeout(0.02, function* () {
            try {
              yield* read(sock, Buffer.alloc(1));
            } finally {
              yield* close(sock);
            }
          }),
        );
        expect(error, "the Timeout goes on after the finally").toBeInstanceOf(Timeout);
        expect(sock.state, "close in the finally block closed the socket").toBe("closed");
        expect(yield* withTimeout(WAKE_SECONDS, read(peer, Buffer.alloc(1))), "the peer sees the end of the stream").toBe(0);
        for (const s of [peer, server]) yield* close(s);
      });
    });
  });

  describe("closing a socket under the operations waiting on it: each fails with SocketClosed", () => {
    it("accept", async () => {
      await suite.leakFree(function* () {
        const server = tcpv4();
        yield* bindAndListen(server, { host: LO4, port: 0 });
        expectClosed(yield* closeUnder("accept", server, () => accept(server)));
      });
    });

    it("read", async () => {
      await suite.leakFree(function* () {
        const [sock, peer, server] = yield* connectedPair();
        expectClosed(yield* closeUnder("read", sock, () => read(sock, Buffer.alloc(100))));
        for (const s of [peer, server]) yield* close(s);
      });
    });

    it("write, parked on a peer that does not read: no bytes are reported sent", async () => {
      await suite.leakFree(function* () {
        const [sock, peer, server] = yield* connectedPair();
        // far more than the kernel's buffers take: the writer waits for the peer
        expectClosed(yield* closeUnder("write", sock, () => write(sock, Buffer.alloc(32 << 20))));
        for (const s of [peer, server]) yield* close(s);
      });
    });

    it.skipIf(!suite.systemSockets)("connect, to a listener whose queue is full", async () => {
      const stuck = await stuckListener();
      try {
        await suite.leakFree(function* () {
          // the listener's queue holds a connection or two; then a connect waits
          const made: Socket[] = [];
          let waited = false;
          for (let i = 0; i < 6 && !waited; i++) {
            const sock = tcpv4();
            made.push(sock);
            const connecting = B.spawn(function* () {
              yield* connect(sock, { host: LO4, port: stuck.port });
            });
            yield* sleep(0.2);
            if (connecting.status === "pending") {
              waited = true;
              yield* close(sock);
              expectClosed(yield* B.awaitTask(connecting));
            } else yield* B.awaitExn(connecting);
          }
          expect(waited, "close returns only once the system handle is gone").toBe(true);
          for (const s of made) yield* close(s);
        });
      } finally {
        await stuck.stop();
      }
    });

    it("connect, still resolving its destination's name", async () => {
      await suite.leakFree(function* () {
        const [server, port] = yield* loopbackListener();
        const sock = tcpv4();
        // closed right after it started, before Node's loop could answer the lookup
        expectClosed(yield* closeUnder("connect", sock, () => connect(sock, { host: "localhost", port }), B.yieldNow));
        yield* close(server);
      });
    });

    it("recvfrom", async () => {
      await suite.leakFree(function* () {
        const udp = udpv4();
        yield* bindAndListen(udp, { host: LO4, port: 0 });
        expectClosed(yield* closeUnder("recvfrom", udp, () => recvfrom(udp, Buffer.alloc(100))));
      });
    });

    it("sendto, still resolving its destination's name", async () => {
      await suite.leakFree(function* () {
        const receiver = udpv4();
        yield* bindAndListen(receiver, { host: LO4, port: 0 });
        const { port } = getsockname(receiver) as InetAddress;
        const udp = udpv4();
        // closed right after it started, before Node's loop could answer the lookup
        const r = yield* closeUnder("sendto", udp, () => sendto(udp, Buffer.from("x"), { host: "localhost", port }), B.yieldNow);
        expectClosed(r);
        yield* close(receiver);
      });
    });
  });
}
