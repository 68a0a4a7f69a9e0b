import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { accept, type Backend, bindAndListen, close, connect, getsockname, type InetAddress, SocketClosed, tcpv4 } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";
import { echoServer, failure, LO4, pattern, roundTrip } from "./support.js";

/** @internal */
export function sharingTests(suite: Suite): void {
  describe("sharing a listening socket across domains (share/adopt, when the backend has them)", () => {
    const sharing = (): Promise<boolean> =>
      suite.inRun(function* () {
        return typeof (L.currentEvents() as Backend).share === "function";
      });

    it("an adopted listener has a descriptor of its own: it accepts after the original closed", async (ctx) => {
      if (!(await sharing())) return ctx.skip();
      await suite.leakFree(function* () {
        const b = L.currentEvents() as Backend;
        const original = tcpv4();
        yield* bindAndListen(original, { host: LO4, port: 0 });
        const addr = getsockname(original) as InetAddress;
        const shared = b.share!(original);
        expect(shared, "share describes a listening socket: its kind and address").toMatchObject({ kind: "tcp4", address: addr });
        expect(shared.guard, "with its guard, shared memory").toBeInstanceOf(SharedArrayBuffer);
        const copy = b.adopt!(shared);
        expect(copy.state, 'an adopted listener is "listening" at once').toBe("listening");
        expect(copy.backend, "and a socket of the adopting backend").toBe(b);
        expect(getsockname(copy), "at the same address").toEqual(addr);
        yield* close(original); // closes the original's descriptor only
        const srv = B.spawn(echoServer, copy, 1);
        const sock = tcpv4();
        yield* connect(sock, addr);
        yield* roundTrip(sock, pattern(42, 10_000));
        yield* close(sock);
        yield* B.awaitExn(srv);
        yield* close(copy);
      });
    });

    it("closing an adopted listener right away, and adopting after the owner closed (it arrives closed), leave nothing", async (ctx) => {
      if (!(await sharing())) return ctx.skip();
      await suite.leakFree(function* () {
        const b = L.currentEvents() as Backend;
        const original = tcpv4();
        yield* bindAndListen(original, { host: LO4, port: 0 });
        yield* close(b.adopt!(b.share!(original)));
        const shared = b.share!(original);
        yield* close(original);
        const late = b.adopt!(shared);
        expect(late.state, 'a listener adopted after its owner closed it arrives "closed"').toBe("closed");
        expect(yield* failure(() => accept(late)), "and accept on it fails with SocketClosed").toBeInstanceOf(SocketClosed);
        yield* close(late);
      });
    });
  });
}
