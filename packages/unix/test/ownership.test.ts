import * as B from "@bobbin/core";
import { failure, thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { getsockname, type InetAddress, type OwnedSocket, OwnedSockets, run, sleep } from "../src/index.js";

function* echo(client: OwnedSocket): Generator<B.Instruction, void, unknown> {
  const buf = Buffer.alloc(256);
  for (let n: number; (n = yield* OwnedSockets.read(client, buf)) > 0; ) yield* OwnedSockets.write(client, buf, 0, n);
  yield* OwnedSockets.close(client);
}

describe("Ownership", () => {
  it("the book's echo server: clients are given to their tasks, and every socket is released", async () => {
    const replies = await run(function* () {
      const server = OwnedSockets.tcpv4();
      yield* OwnedSockets.bindAndListen(server, { host: "127.0.0.1", port: 0 });
      const { port } = OwnedSockets.getsockname(server) as InetAddress;
      const serving = B.spawn({ give: [server] }, function* () {
        const clients = B.orphans<void>();
        for (let i = 0; i < 3; i++) {
          const [client] = yield* OwnedSockets.accept(server);
          B.spawn({ orphans: clients, give: [client] }, echo, client);
        }
        for (const r of yield* B.drain(clients)) if (!r.ok) throw r.error;
        yield* OwnedSockets.close(server);
      });
      const replies: string[] = [];
      for (let i = 0; i < 3; i++) {
        const sock = OwnedSockets.tcpv4();
        yield* OwnedSockets.connect(sock, { host: "127.0.0.1", port });
        yield* OwnedSockets.write(sock, `hello ${i}`);
        const buf = Buffer.alloc(7);
        yield* OwnedSockets.readExactly(sock, buf);
        replies.push(buf.toString());
        OwnedSockets.shutdown(sock, "send");
        expect(yield* OwnedSockets.read(sock, buf)).toBe(0);
        yield* OwnedSockets.close(sock);
      }
      yield* B.awaitExn(serving);
      return replies;
    });
    expect(replies).toEqual(["hello 0", "hello 1", "hello 2"]);
  });

  it("a task that does not own the socket gets NotOwner", async () => {
    await run(function* () {
      const sock = OwnedSockets.udpv4();
      const other = B.spawn(function* () {
        return thrownBy(() => OwnedSockets.sendto(sock, Buffer.from("x"), { host: "127.0.0.1", port: 9 }));
      });
      expect(yield* B.awaitExn(other)).toBeInstanceOf(B.NotOwner);
      expect(thrownBy(() => OwnedSockets.read({} as OwnedSocket, Buffer.alloc(1)))).toBeInstanceOf(TypeError);
      yield* OwnedSockets.close(sock);
      expect(thrownBy(() => OwnedSockets.close(sock))).toBeInstanceOf(B.NotOwner); // released
    });
  });

  it("the finaliser closes the socket of a task that fails or is cancelled", async () => {
    await run(function* () {
      let failed: OwnedSocket | null = null;
      const t = B.spawn(function* () {
        failed = OwnedSockets.tcpv4();
        yield* OwnedSockets.bindAndListen(failed, { host: "127.0.0.1", port: 0 });
        throw new Error("oops");
      });
      expect((yield* B.awaitTask(t)).ok).toBe(false);
      expect(failed!.value.state).toBe("closed");
      let cancelled: OwnedSocket | null = null;
      const u = B.spawn(function* () {
        cancelled = OwnedSockets.tcpv4();
        yield* OwnedSockets.bindAndListen(cancelled, { host: "127.0.0.1", port: 0 });
        yield* OwnedSockets.accept(cancelled);
      });
      yield* sleep(0.01);
      yield* B.cancel(u);
      expect(cancelled!.value.state).toBe("closed");
    });
  });

  it("returning while owning a socket closes it and fails the run with ResourceLeaked", async () => {
    let leaked: OwnedSocket | null = null;
    await expect(
      run(function* () {
        const t = B.spawn(function* () {
          leaked = OwnedSockets.tcpv4();
          yield* OwnedSockets.bindAndListen(leaked, { host: "127.0.0.1", port: 0 });
        });
        yield* B.awaitTask(t);
      }),
    ).rejects.toBeInstanceOf(B.ResourceLeaked);
    expect(leaked!.value.state).toBe("closed");
  });

  it("ofSocket owns a plain socket; recvfrom/sendto check ownership too", async () => {
    await run(function* () {
      const a = OwnedSockets.udpv4();
      yield* OwnedSockets.bindAndListen(a, { host: "127.0.0.1", port: 0 });
      const { port } = getsockname(a.value) as InetAddress;
      const b = OwnedSockets.udpv6();
      yield* OwnedSockets.close(b);
      const c = OwnedSockets.udpv4();
      yield* OwnedSockets.sendto(c, Buffer.from("ping"), 0, 4, { host: "127.0.0.1", port });
      const buf = Buffer.alloc(10);
      const [n] = yield* OwnedSockets.recvfrom(a, buf);
      expect(buf.subarray(0, n).toString()).toBe("ping");
      expect(yield* failure(() => OwnedSockets.recvfrom(c, buf, 0, -1))).toBeInstanceOf(RangeError);
      yield* OwnedSockets.close(a);
      yield* OwnedSockets.close(c);
    });
  });
});
