import { noProcFds, openFdsOf, procFds } from "@bobbin/test-support";
import { read, run, write } from "@bobbin/unix";
import { connectedPair } from "@bobbin/unix/conformance";
import { describe, expect, it } from "vitest";
import { EpollBackend } from "../../src/epoll/backend.js";
import { nativeBackend } from "../../src/index.js";

describe("native backend", () => {
  it("is made by nativeBackend() and named", () => {
    const b = nativeBackend();
    expect(b).toBeInstanceOf(EpollBackend);
    expect(b.name).toBe("native");
    expect(nativeBackend(0)).toBeInstanceOf(EpollBackend); // called as run's factory with the domain
    expect(() => nativeBackend({ batchSize: 0 })).toThrow(RangeError);
    return Promise.all([b.drain()]);
  });

  it.skipIf(!procFds)(`closes its epoll set when the run is over${noProcFds}`, async () => {
    const before = openFdsOf("eventpoll");
    await run(
      function* () {
        const [client, conn, server] = yield* connectedPair();
        yield* write(client, "x");
        expect(yield* read(conn, Buffer.alloc(4))).toBe(1);
        // left open: the end of the run closes them
        void server;
      },
      { backend: nativeBackend },
    );
    expect(openFdsOf("eventpoll")).toBe(before);
  });
});
