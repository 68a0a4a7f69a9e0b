import * as B from "@bobbin/core";
import { failure } from "@bobbin/test-support";
import {
  accept,
  bindAndListen,
  close,
  connect,
  getsockname,
  type InetAddress,
  readExactly,
  recvfrom,
  sendto,
  sleep,
  tcpv4,
  tcpv6,
  udpv4,
  withTimeout,
  write,
} from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { Sim } from "../src/index.js";
import { echoServer, echoThrough, pattern } from "./support/programs.js";

describe("addresses", () => {
  it("hosts are 10.0.0.n and fd00::n in declaration order; names resolve to them; accept tells the client's address", async () => {
    const sim = new Sim({ seed: 1 });
    sim.host("server", function* () {
      const s4 = tcpv4();
      yield* bindAndListen(s4, { host: "server", port: 80 });
      const s6 = tcpv6();
      yield* bindAndListen(s6, { host: "::", port: 80 });
      const [, peer4] = yield* accept(s4);
      const [, peer6] = yield* accept(s6);
      return [getsockname(s4), peer4, peer6];
    });
    sim.client("client", function* () {
      const a = tcpv4();
      yield* connect(a, { host: "server", port: 80 });
      const b = tcpv6();
      yield* connect(b, { host: "fd00::1", port: 80 });
      return [getsockname(a), getsockname(b)];
    });
    sim.client("watcher", function* () {
      yield* sleep(1);
      return sim.lookup("client");
    });
    const [addresses, watched] = await sim.run();
    expect(addresses).toEqual([
      { host: "10.0.0.2", port: 49152 },
      { host: "fd00::2", port: 49152 },
    ]);
    expect(watched).toBe("10.0.0.2");
    expect(sim.lookup("server", 6)).toBe("fd00::1");
  });

  it("unknown names and addresses, and addresses of other hosts, are the task's errors", async () => {
    const sim = new Sim({ seed: 1 });
    sim.host("other", function* () {});
    sim.client("client", function* () {
      const codes: (string | undefined)[] = [];
      codes.push((yield* failure(() => connect(tcpv4(), { host: "nowhere", port: 80 }))).code);
      codes.push((yield* failure(() => connect(tcpv4(), { host: "10.9.9.9", port: 80 }))).code);
      codes.push((yield* failure(() => bindAndListen(tcpv4(), { host: "other", port: 80 }))).code);
      codes.push((yield* failure(() => bindAndListen(tcpv4(), { host: "10.0.0.1", port: 80 }))).code);
      const s = tcpv4();
      yield* bindAndListen(s, { host: "localhost", port: 80 });
      codes.push((yield* failure(() => bindAndListen(tcpv4(), { host: "0.0.0.0", port: 80 }))).code);
      return codes;
    });
    const [codes] = await sim.run();
    expect(codes).toEqual(["ENOTFOUND", "EHOSTUNREACH", "EADDRNOTAVAIL", "EADDRNOTAVAIL", "EADDRINUSE"]);
  });

  it("the loopback is the host's own: another host cannot reach it, and it takes no time", async () => {
    const sim = new Sim({ seed: 1 });
    sim.network({ latency: 0.01 });
    sim.client("server", function* () {
      const s = tcpv4();
      yield* bindAndListen(s, { host: "127.0.0.1", port: 7 });
      const srv = B.spawn(echoServer(8));
      const t0 = sim.now();
      const back = yield* echoThrough("localhost", 8, Buffer.from("self"));
      const elapsed = sim.now() - t0;
      yield* sleep(1);
      yield* B.cancel(srv);
      return [back.toString(), elapsed];
    });
    sim.client("client", function* () {
      const error = yield* failure(() => withTimeout(5, connect(tcpv4(), { host: "server", port: 7 })));
      return error.code;
    });
    expect(await sim.run()).toEqual([["self", 0], "ECONNREFUSED"]);
  });
});

describe("latency", () => {
  it("a fixed latency L makes a connect and a round trip take 2L each", async () => {
    const sim = new Sim({ seed: 1 });
    sim.network({ latency: 0.01 });
    sim.host("server", echoServer(7));
    sim.client("client", function* () {
      const sock = tcpv4();
      const t0 = sim.now();
      yield* connect(sock, { host: "server", port: 7 });
      const t1 = sim.now();
      const back = Buffer.alloc(3);
      yield* write(sock, "abc");
      yield* readExactly(sock, back);
      const t2 = sim.now();
      yield* close(sock);
      return [t1 - t0, t2 - t1];
    });
    const [[connectTime, roundTrip]] = (await sim.run()) as [number, number][];
    expect(connectTime).toBeCloseTo(0.02, 9);
    expect(roundTrip).toBeCloseTo(0.02, 9);
  });

  it("latencies are drawn from the seed: the same seed gives the same times, another seed other times", async () => {
    const timeOf = async (seed: number) => {
      const sim = new Sim({ seed });
      sim.network({ latency: { min: 0.001, max: 0.1 } });
      sim.host("server", echoServer(7));
      sim.client("client", function* () {
        for (let i = 0; i < 5; i++) yield* echoThrough("server", 7, pattern(i, 100));
        return sim.now();
      });
      return (await sim.run())[0];
    };
    const a = await timeOf(11);
    expect(await timeOf(11)).toBe(a);
    expect(await timeOf(12)).not.toBe(a);
  });

  it("a function latency sees the world's uniform draws; a link's own latency applies between its two hosts only", async () => {
    const sim = new Sim({ seed: 3 });
    const draws: number[] = [];
    sim.network({
      latency: (u) => {
        draws.push(u);
        return 0.001;
      },
    });
    sim.host("near", echoServer(7));
    sim.host("far", echoServer(7));
    expect(() => sim.link("client", "far", { latency: 1 })).toThrow(TypeError);
    sim.client("client", function* () {
      const t0 = sim.now();
      yield* echoThrough("near", 7, Buffer.from("x"));
      const t1 = sim.now();
      yield* echoThrough("far", 7, Buffer.from("x"));
      return [t1 - t0, sim.now() - t1];
    });
    sim.link("client", "far", { latency: 1 });
    const [[near, far]] = (await sim.run()) as [number, number][];
    expect(near).toBeCloseTo(0.004, 9);
    expect(far).toBeCloseTo(4, 9);
    expect(draws.length).toBeGreaterThan(0);
    for (const u of draws) expect(u >= 0 && u < 1).toBe(true);
  });

  it("TCP delivers every byte in order under jittery latency", async () => {
    const sim = new Sim({ seed: 5 });
    sim.network({ latency: { min: 0.0001, max: 0.05 } });
    sim.host("server", echoServer(7));
    sim.client("client", function* () {
      const data = pattern(9, 300_000);
      const back = yield* echoThrough("server", 7, data);
      return back.equals(data);
    });
    expect(await sim.run()).toEqual([true]);
  });
});

describe("UDP over links", () => {
  /** Sends `count` numbered datagrams from the client to the server; returns the numbers the server got, in order. */
  const datagrams = async (seed: number, options: Parameters<Sim["network"]>[0], count: number) => {
    const sim = new Sim({ seed });
    sim.network(options);
    sim.host("server", function* () {
      const s = udpv4();
      yield* bindAndListen(s, { host: "0.0.0.0", port: 53 });
      const got: number[] = [];
      const buf = Buffer.alloc(16);
      try {
        for (;;) {
          const [n] = yield* recvfrom(s, buf);
          got.push(buf.readUInt32BE(0));
          expect(n).toBe(4);
        }
      } finally {
        received = got;
      }
    });
    let received: number[] = [];
    sim.client("client", function* () {
      const s = udpv4();
      for (let i = 0; i < count; i++) {
        const msg = Buffer.alloc(4);
        msg.writeUInt32BE(i);
        yield* sendto(s, msg, { host: "server", port: 53 });
        yield* sleep(0.001);
      }
      yield* sleep(1);
    });
    await sim.run();
    return received;
  };

  it("without faults every datagram arrives", async () => {
    const got = await datagrams(1, { latency: 0.002 }, 100);
    expect(got).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });

  it("loss drops about that share of datagrams, the same ones for the same seed", async () => {
    const got = await datagrams(2, { loss: 0.3 }, 1000);
    expect(got.length).toBeGreaterThan(600);
    expect(got.length).toBeLessThan(800);
    expect(await datagrams(2, { loss: 0.3 }, 1000)).toEqual(got);
  });

  it("reordering lets later datagrams overtake earlier ones (TCP is never reordered)", async () => {
    const got = await datagrams(3, { latency: { min: 0.001, max: 0.003 }, reorder: 0.5 }, 200);
    expect(got.length).toBe(200);
    expect(got).not.toEqual([...got].sort((a, b) => a - b));
    expect([...got].sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });
});

describe("partitions and holds", () => {
  it("a partition loses UDP and holds TCP: the stream resumes, complete and in order, after the repair", async () => {
    const sim = new Sim({ seed: 1 });
    sim.host("server", echoServer(7));
    sim.host("udp", function* () {
      const s = udpv4();
      yield* bindAndListen(s, { host: "0.0.0.0", port: 9 });
      const buf = Buffer.alloc(8);
      for (;;) {
        const [n] = yield* recvfrom(s, buf);
        heard.push(buf.subarray(0, n).toString());
      }
    });
    const heard: string[] = [];
    sim.client("client", function* () {
      const sock = tcpv4();
      yield* connect(sock, { host: "server", port: 7 });
      const udp = udpv4();
      yield* sendto(udp, Buffer.from("before"), { host: "udp", port: 9 });
      yield* sleep(0.1);
      sim.partition("client", "server");
      sim.partition("client", "udp");
      yield* sendto(udp, Buffer.from("during"), { host: "udp", port: 9 });
      const data = pattern(3, 50_000);
      const back = Buffer.alloc(data.length);
      const reader = B.spawn(function* () {
        yield* readExactly(sock, back);
        return sim.now();
      });
      yield* write(sock, data);
      yield* sleep(30);
      const pending = reader.status;
      const repairedAt = sim.now();
      sim.repair("client", "server");
      sim.repair("client", "udp");
      yield* sendto(udp, Buffer.from("after"), { host: "udp", port: 9 });
      const doneAt = yield* B.awaitExn(reader);
      yield* close(sock);
      yield* sleep(0.1);
      return [pending, doneAt > repairedAt, back.equals(data)];
    });
    const [result] = await sim.run();
    expect(result).toEqual(["pending", true, true]);
    expect(heard).toEqual(["before", "after"]);
  });

  it("a connect across a partition is retried (1 s, 2 s, 4 s…) and succeeds after the repair, or times out", async () => {
    const sim = new Sim({ seed: 1 });
    sim.host("server", echoServer(7));
    sim.client("client", function* () {
      sim.partition("client", "server");
      const healer = B.spawn(function* () {
        yield* sleep(5);
        sim.repair("client", "server");
      });
      const sock = tcpv4();
      yield* connect(sock, { host: "server", port: 7 });
      const connectedAt = sim.now();
      yield* B.awaitExn(healer);
      yield* close(sock);
      sim.partition("client", "server");
      const t0 = sim.now();
      const error = yield* failure(() => connect(tcpv4(), { host: "server", port: 7 }));
      return [connectedAt, error.code, sim.now() - t0];
    });
    const [[connectedAt, code, gaveUpAfter]] = (await sim.run()) as [number, string, number][];
    // SYNs at 0, 1, 3 and 7 s: the one at 7 s crosses the repaired link
    expect(connectedAt).toBeGreaterThan(7);
    expect(connectedAt).toBeLessThan(7.01);
    expect(code).toBe("ETIMEDOUT");
    expect(gaveUpAfter).toBeCloseTo(127, 6); // 1 + 2 + … + 64 s, as Linux's six retries
  });

  it("hold keeps every packet, TCP and UDP, until release sends them on", async () => {
    const sim = new Sim({ seed: 1 });
    sim.network({ latency: 0.002 });
    const heard: string[] = [];
    sim.host("peer", function* () {
      const s = udpv4();
      yield* bindAndListen(s, { host: "0.0.0.0", port: 9 });
      B.spawn(echoServer(7));
      const buf = Buffer.alloc(8);
      for (;;) {
        const [n] = yield* recvfrom(s, buf);
        heard.push(`${buf.subarray(0, n).toString()}@${Math.round(sim.now())}`);
      }
    });
    sim.client("client", function* () {
      const sock = tcpv4();
      yield* connect(sock, { host: "peer", port: 7 });
      const udp = udpv4();
      sim.hold("client", "peer");
      for (const word of ["a", "b", "c"]) yield* sendto(udp, Buffer.from(word), { host: "peer", port: 9 });
      yield* write(sock, "tcp");
      const back = Buffer.alloc(3);
      const reader = B.spawn(function* () {
        yield* readExactly(sock, back);
        return Math.round(sim.now());
      });
      yield* sleep(10);
      sim.release("client", "peer");
      const echoedAt = yield* B.awaitExn(reader);
      yield* close(sock);
      return [back.toString(), echoedAt];
    });
    expect(await sim.run()).toEqual([["tcp", 10]]);
    expect(heard).toEqual(["a@10", "b@10", "c@10"]);
  });
});

describe("sockets bound by sendto", () => {
  it("a fresh UDP socket gets an ephemeral port on its first sendto, and replies find it", async () => {
    const sim = new Sim({ seed: 1 });
    sim.host("server", function* () {
      const s = udpv4();
      yield* bindAndListen(s, { host: "0.0.0.0", port: 53 });
      const buf = Buffer.alloc(64);
      const [n, from] = yield* recvfrom(s, buf);
      yield* sendto(s, buf, 0, n, from);
      return from;
    });
    sim.client("client", function* () {
      const s = udpv4();
      yield* sendto(s, Buffer.from("hi"), { host: "server", port: 53 });
      const buf = Buffer.alloc(8);
      const [n, from] = yield* recvfrom(s, buf);
      return [getsockname(s), buf.subarray(0, n).toString(), from];
    });
    const [reply] = await sim.run();
    expect(reply).toEqual([{ host: "0.0.0.0", port: 49152 }, "hi", { host: "10.0.0.1", port: 53 } satisfies InetAddress]);
  });
});
