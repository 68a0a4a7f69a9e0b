/**
 * The libuv backend's listeners: `share`/`adopt` within one domain (a
 * listener over a descriptor of its own, brought by a relay process). The
 * cross-domain tests, with real worker domains, are in `../share.test.ts`.
 */

import { closeSync, openSync } from "node:fs";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { failure } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { type LibuvBackend, type SharedSocket, ShareGuard } from "../../src/backend/index.js";
import { accept, bindAndListen, close, connect, getsockname, readExactly, run, type Socket, tcpv4, write } from "../../src/index.js";
import type { UvSocket } from "../../src/libuv/socket.js";

/** Live handles of the kinds sharing may leave behind. */
function sharingHandles(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) {
    if (/^(TCPServerWrap|TCPSocketWrap|PipeWrap|PipeServerWrap|ProcessWrap)$/.test(kind)) out[kind] = (out[kind] ?? 0) + 1;
  }
  return out;
}

function* roundTrip(to: Socket, listener: Socket): Generator<B.Instruction, void, unknown> {
  const acceptor = B.spawn(function* () {
    return (yield* accept(listener))[0];
  });
  const c = tcpv4();
  yield* connect(c, getsockname(to));
  const peer = yield* B.awaitExn(acceptor);
  yield* write(c, "ping");
  const buf = Buffer.alloc(4);
  yield* readExactly(peer, buf);
  expect(buf.toString()).toBe("ping");
  yield* close(peer);
  yield* close(c);
}

describe("the libuv backend's share and adopt", () => {
  it("an adopted listener has a descriptor of its own: it accepts after the original closed; closing both leaves nothing", async () => {
    const before = sharingHandles();
    await run(function* () {
      const backend = L.currentEvents() as LibuvBackend;
      const original = tcpv4();
      yield* bindAndListen(original, { host: "127.0.0.1", port: 0 });
      const shared: SharedSocket = backend.share(original);
      expect(shared).toMatchObject({ kind: "tcp4", address: getsockname(original), backlog: 511 });
      const copy = backend.adopt(shared) as UvSocket;
      expect(copy.state).toBe("listening");
      expect(getsockname(copy)).toEqual(getsockname(original)); // before its descriptor arrived, too
      yield* close(original);
      yield* roundTrip(copy, copy); // accept waits for the relay, then serves
      expect(copy.listener!.fd).toBeGreaterThan(2);
      expect(copy.listener!.fd).not.toBe(shared.fd);
      yield* close(copy);
    });
    expect(sharingHandles()).toEqual(before);
  });

  it("closing an adopted listener before its descriptor arrived drops it; closing the original after its guard let go", async () => {
    const before = sharingHandles();
    await run(function* () {
      const backend = L.currentEvents() as LibuvBackend;
      const original = tcpv4();
      yield* bindAndListen(original, { host: "127.0.0.1", port: 0 });
      const copy = backend.adopt(backend.share(original));
      yield* close(copy); // the relay is still starting: killed, nothing left
      yield* roundTrip(original, original);
      yield* close(original);
    });
    expect(sharingHandles()).toEqual(before);
  });

  it("a listener shared after its owner closed it arrives closed", async () => {
    await run(function* () {
      const backend = L.currentEvents() as LibuvBackend;
      const original = tcpv4();
      yield* bindAndListen(original, { host: "127.0.0.1", port: 0 });
      const shared = backend.share(original);
      yield* close(original); // seals the guard
      const late = backend.adopt(shared);
      expect(late.state).toBe("closed");
      yield* close(late);
    });
  });

  it("a descriptor that is not a socket: every accept fails with ESHARE, the task only", async () => {
    const file = openSync("/dev/null", "r");
    const before = sharingHandles();
    try {
      await run(function* () {
        const backend = L.currentEvents() as LibuvBackend;
        const bogus = backend.adopt({
          kind: "tcp4",
          fd: file,
          address: { host: "127.0.0.1", port: 9 },
          backlog: 511,
          guard: new ShareGuard().buffer,
        });
        for (let i = 0; i < 2; i++) {
          const error = (yield* failure(() => accept(bogus))) as NodeJS.ErrnoException;
          expect(error.code).toBe("ESHARE");
          expect(error.message).toMatch(/could not be set up/);
        }
        yield* close(bogus);
      });
    } finally {
      closeSync(file);
    }
    expect(sharingHandles()).toEqual(before);
  });
});
