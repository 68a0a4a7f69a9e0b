/**
 * Sockets are `Disposable`: `using s = tcpv4()` closes the socket on every
 * way out of its block, and `[Symbol.dispose]()` begins closing at once,
 * as `close` does, without waiting.
 */
import * as B from "@bobbin/core";
import { accept, bindAndListen, close, read, type Socket, SocketClosed, sleep, tcpv4, udpv4, withTimeout } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";
import { connectedPair, LO4 } from "./support.js";

/** @internal */
export function disposalTests(suite: Suite): void {
  describe("sockets are Disposable (`using`)", () => {
    it("`using` closes the socket when its block returns, throws, or its task is cancelled", async () => {
      await suite.leakFree(function* () {
        const seen: Socket[] = [];
        {
          using sock = tcpv4();
          yield* bindAndListen(sock, { host: LO4, port: 0 });
          seen.push(sock);
        }
        expect(seen[0]!.state, "using closes the socket when its block returns").toBe("closed");

        try {
          using sock = udpv4();
          yield* bindAndListen(sock, { host: LO4, port: 0 });
          seen.push(sock);
          throw new Error("the block fails");
        } catch (error) {
          expect((error as Error).message, "the block's own error comes out, not one of the disposal").toBe("the block fails");
        }
        expect(seen[1]!.state, "using closes the socket when its block throws").toBe("closed");

        const accepting = B.spawn(function* () {
          using server = tcpv4();
          yield* bindAndListen(server, { host: LO4, port: 0 });
          seen.push(server);
          yield* accept(server);
        });
        while (seen.length < 3) yield* sleep(0.01);
        yield* B.cancel(accepting);
        expect(seen[2]!.state, "using closes the socket when its task is cancelled").toBe("closed");
      });
    });

    it("an accepted socket in `using`: the server's end closes, and the client reads the end of the stream", async () => {
      await suite.leakFree(function* () {
        const [client, peer, server] = yield* connectedPair();
        {
          using theirs = peer;
          expect(theirs.state, "an accepted socket in using is connected inside the block").toBe("connected");
        }
        const n = yield* withTimeout(5, read(client, Buffer.alloc(16)));
        expect(n, "the client reads the end of the stream: the server's end was closed").toBe(0);
        for (const s of [client, server]) yield* close(s);
      });
    });

    it("[Symbol.dispose]() closes at once: a waiting read fails with SocketClosed; disposing again does nothing, close() then waits for the handle", async () => {
      await suite.leakFree(function* () {
        const [sock, peer, server] = yield* connectedPair();
        const reader = B.spawn(function* () {
          return yield* read(sock, Buffer.alloc(16));
        });
        yield* sleep(0.05);
        expect(reader.status, "the read waits").toBe("pending");
        sock[Symbol.dispose]();
        expect(sock.state, '[Symbol.dispose]() makes the socket "closed" at once').toBe("closed");
        const r = yield* withTimeout(5, B.awaitTask(reader));
        expect(r.ok ? r.value : r.error, "the waiting read fails with SocketClosed").toBeInstanceOf(SocketClosed);
        sock[Symbol.dispose]();
        yield* close(sock);
        for (const s of [peer, server]) yield* close(s);
      });
    });
  });
}
