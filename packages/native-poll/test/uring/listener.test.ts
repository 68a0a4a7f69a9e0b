import * as B from "@bobbin/core";
import { accept, bindAndListen, close, connect, getsockname, run, type Socket, sleep, tcpv4, withTimeout } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { uringBackend } from "../../src/index.js";
import type { IoUringBackend } from "../../src/uring/backend.js";
import type { UringSocket } from "../../src/uring/socket.js";
import { noUring, uring } from "../helpers.js";

describe.skipIf(!uring.available)(`io_uring backend: a listener${noUring}`, () => {
  it("a listener accepts a few connections ahead of accept, no more", async () => {
    const out = await run(
      function* () {
        const server = tcpv4();
        yield* bindAndListen(server, { host: "127.0.0.1", port: 0 }, { backlog: 128 });
        const clients: Socket[] = [];
        const first = B.spawn(function* () {
          return yield* accept(server); // arms the multishot accept
        });
        for (let i = 0; i < 40; i++) {
          const c = tcpv4();
          yield* connect(c, getsockname(server));
          clients.push(c);
        }
        yield* sleep(0.05);
        const [conn] = yield* B.awaitExn(first);
        const ahead = (server as UringSocket).accepted.length;
        const conns = [conn];
        for (let i = 1; i < 40; i++) conns.push((yield* withTimeout(5, accept(server)))[0]);
        for (const s of [...clients, ...conns, server]) yield* close(s);
        return { ahead, accepted: conns.length };
      },
      { backend: uringBackend },
    );
    expect(out.ahead).toBeGreaterThan(0);
    expect(out.ahead).toBeLessThanOrEqual(16 + 4); // the cancel meets a few more on its way
    expect(out.accepted).toBe(40);
  });

  it("once shared with other domains, a listener takes one connection per waiting accept", async () => {
    const out = await run(
      function* () {
        const server = tcpv4();
        yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
        const first = B.spawn(function* () {
          return yield* accept(server); // a multishot accept, cancelled by share below
        });
        yield* sleep(0.01);
        (server.backend as IoUringBackend).share(server);
        yield* sleep(0.01); // the cancellation reaches the kernel
        const clients: Socket[] = [];
        for (let i = 0; i < 10; i++) {
          const c = tcpv4();
          yield* connect(c, getsockname(server));
          clients.push(c);
        }
        const [conn] = yield* B.awaitExn(first);
        yield* sleep(0.05);
        const ahead = (server as UringSocket).accepted.length;
        const conns = [conn];
        for (let i = 1; i < 10; i++) conns.push((yield* withTimeout(5, accept(server)))[0]);
        for (const s of [...clients, ...conns, server]) yield* close(s);
        return { ahead, accepted: conns.length };
      },
      { backend: uringBackend },
    );
    expect(out).toEqual({ ahead: 0, accepted: 10 });
  });
});
