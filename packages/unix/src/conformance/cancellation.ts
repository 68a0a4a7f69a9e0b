import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import {
  accept,
  bindAndListen,
  close,
  connect,
  read,
  readExactly,
  type Socket,
  sleep,
  Timeout,
  tcpv4,
  withTimeout,
  write,
} from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";
import { stuckListener } from "./peers.js";
import { activeHandles, failure, LO4, loopbackListener } from "./support.js";

/** @internal */
export function cancellationTests(suite: Suite): void {
  describe("cancellation and timeouts", () => {
    it("a read cancelled by a timeout throws Timeout and loses no data", async () => {
      await suite.leakFree(function* () {
        const [server, port] = yield* loopbackListener();
        const go = new L.Trigger();
        const peer = B.spawn(function* () {
          const [client] = yield* accept(server);
          yield* go.wait();
          yield* write(client, "late");
          yield* close(client);
        });
        const sock = tcpv4();
        yield* connect(sock, { host: LO4, port });
        const buf = Buffer.alloc(10);
        const t0 = performance.now();
        const error = yield* failure(() => withTimeout(0.05, read(sock, buf)));
        expect(error, "a read cancelled by withTimeout throws Timeout").toBeInstanceOf(Timeout);
        expect(performance.now() - t0, "not before the deadline").toBeGreaterThanOrEqual(49);
        go.signal();
        const n = yield* withTimeout(5, read(sock, buf));
        expect(
          buf.subarray(0, n).toString(),
          "the bytes that came after the timeout are read by the next read: the cancelled read took none",
        ).toBe("late");
        yield* B.awaitExn(peer);
        yield* close(sock);
        yield* close(server);
      });
    });

    it.skipIf(!suite.systemSockets)(
      "a connect cancelled by a timeout throws Timeout; closing the socket leaves nothing behind",
      async () => {
        const stuck = await stuckListener();
        try {
          await suite.leakFree(function* () {
            const socks: Socket[] = [];
            let timedOut = 0;
            // the listener's queue holds two connections; the next connect hangs
            for (let i = 0; i < 6 && timedOut === 0; i++) {
              const sock = tcpv4();
              socks.push(sock);
              try {
                yield* withTimeout(0.3, connect(sock, { host: LO4, port: stuck.port }));
              } catch (error) {
                expect(error, "a connect cancelled by withTimeout throws Timeout").toBeInstanceOf(Timeout);
                expect(sock.state, 'and leaves the socket "connecting" (closing it cleans up)').toBe("connecting");
                timedOut++;
              }
            }
            expect(timedOut, "the connect to a listener whose queue is full timed out").toBe(1);
            for (const s of socks) yield* close(s);
          });
        } finally {
          await stuck.stop();
        }
      },
    );

    it("cancelling a task blocked in accept, read or write leaves no handle behind", async () => {
      await suite.leakFree(function* () {
        const [server, port] = yield* loopbackListener();
        // blocked in accept
        const acceptor = B.spawn(function* () {
          const other = tcpv4();
          try {
            yield* bindAndListen(other, { host: LO4, port: 0 });
            yield* accept(other);
          } finally {
            yield* close(other);
          }
        });
        // a peer that never reads nor writes
        const [peerTask, sock] = [
          B.spawn(function* () {
            const [client] = yield* accept(server);
            return client;
          }),
          tcpv4(),
        ];
        yield* connect(sock, { host: LO4, port });
        const silent = yield* B.awaitExn(peerTask);
        // blocked in read
        const reader = B.spawn(function* () {
          yield* read(sock, Buffer.alloc(100));
        });
        // blocked in write: far more than the kernel buffers take
        const writer = B.spawn(function* () {
          const other = tcpv4();
          try {
            yield* connect(other, { host: LO4, port });
            yield* write(other, Buffer.alloc(64 * 1024 * 1024));
          } finally {
            yield* close(other);
          }
        });
        const writePeer = yield* accept(server);
        yield* sleep(0.1);
        expect(acceptor.status, "accept waits: nobody connects").toBe("pending");
        expect(reader.status, "read waits: nothing comes").toBe("pending");
        expect(writer.status, "write waits: the peer does not read").toBe("pending");
        yield* B.cancel(acceptor);
        yield* B.cancel(reader);
        yield* B.cancel(writer);
        // the socket a cancelled reader waited on still works
        const back = B.spawn(function* () {
          const buf = Buffer.alloc(5);
          yield* readExactly(sock, buf);
          return buf.toString();
        });
        yield* write(silent, "hello");
        expect(yield* B.awaitExn(back), "the peer's bytes still arrive after a read on another socket was cancelled").toBe("hello");
        yield* close(writePeer[0]);
        yield* close(silent);
        yield* close(sock);
        yield* close(server);
      });
    });

    it("nested timeouts: an inner timeout that cannot fire first is not armed", async () => {
      await suite.leakFree(function* () {
        const t0 = performance.now();
        const outer = yield* failure(() => withTimeout(0.05, withTimeout(10, sleep(5))));
        expect(outer, "the outer deadline fires first: Timeout").toBeInstanceOf(Timeout);
        expect((outer as unknown as Timeout).seconds, "the Timeout is the outer scope's (0.05 s)").toBe(0.05);
        const inner = yield* failure(() => withTimeout(10, withTimeout(0.03, sleep(5))));
        expect((inner as unknown as Timeout).seconds, "an inner timeout that cannot fire first was not armed; the next one was").toBe(0.03);
        expect(performance.now() - t0, "the deadlines fire in time").toBeLessThan(3000);
        // an operation that finishes in time returns its value
        expect(
          yield* withTimeout(1, function* () {
            yield* sleep(0.01);
            return 7;
          }),
        ).toBe(7);
      });
    });

    it("sleepers run concurrently; a cancelled sleeper leaves no timer behind", async () => {
      await suite.leakFree(function* () {
        const t0 = performance.now();
        const a = B.spawn(function* () {
          yield* sleep(0.1);
        });
        const b = B.spawn(function* () {
          yield* sleep(0.2);
        });
        yield* B.awaitAll([a, b]);
        const elapsed = performance.now() - t0;
        expect(elapsed, "two sleepers of 0.2 s run concurrently: not before 0.2 s").toBeGreaterThanOrEqual(199);
        expect(elapsed, "and not one after the other").toBeLessThan(290 + 1000);
        const timersBefore = activeHandles().Timeout ?? 0;
        const long = B.spawn(function* () {
          yield* sleep(3600);
        });
        yield* sleep(0.01);
        if (suite.systemClock)
          expect(activeHandles().Timeout ?? 0, "a sleeping task holds a Node timer (the backend's clock is the system's)").toBeGreaterThan(
            timersBefore,
          );
        yield* B.cancel(long);
        // At most as many as before: one of the test runner's own timers may have fired meanwhile.
        expect(activeHandles().Timeout ?? 0, "a cancelled sleeper leaves no timer behind").toBeLessThanOrEqual(timersBefore);
        // many sleepers share one timer
        const many = Array.from({ length: 1000 }, (_, i) =>
          B.spawn(function* () {
            yield* sleep(0.02 + (i % 10) / 1000);
          }),
        );
        yield* sleep(0.005);
        expect(
          (activeHandles().Timeout ?? 0) - timersBefore,
          "cancelled sleepers hold at most the backend's one timer",
        ).toBeLessThanOrEqual(1);
        yield* B.awaitAll(many);
      });
    });
  });
}
