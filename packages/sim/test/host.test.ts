import * as L from "@bobbin/core/lowlevel";
import { failure } from "@bobbin/test-support";
import { accept, bindAndListen, close, connect, onSignal, read, type Socket, sleep, tcpv4, withTimeout, write } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { Sim } from "../src/index.js";
import { echoServer, echoThrough } from "./support/programs.js";

describe("crash and restart", () => {
  it("a crash cancels the host's tasks, resets its connections for the peers and frees its ports; a restart runs main again", async () => {
    const sim = new Sim({ seed: 1 });
    sim.network({ latency: 0.001 });
    const log: string[] = [];
    let starts = 0;
    sim.host("server", function* () {
      starts++;
      try {
        yield* echoServer(7)();
      } finally {
        log.push(`server cleanup at ${sim.now()}`);
      }
    });
    sim.client("client", function* () {
      const sock = tcpv4();
      yield* connect(sock, { host: "server", port: 7 });
      yield* write(sock, "x");
      yield* read(sock, Buffer.alloc(1));
      sim.crash("server");
      const reset = (yield* failure(() => read(sock, Buffer.alloc(1)))).code;
      yield* close(sock);
      // down: its SYNs are lost, the connect waits
      const down = (yield* failure(() => withTimeout(5, connect(tcpv4(), { host: "server", port: 7 })))).name;
      sim.restart("server");
      const back = yield* echoThrough("server", 7, Buffer.from("again")); // port 7 is free again
      return [reset, down, back.toString(), starts];
    });
    expect(await sim.run()).toEqual([["ECONNRESET", "Timeout", "again", 2]]);
    // at the crash (after a connect and one round trip, 1 ms each way), and when the run ends
    expect(log).toEqual(["server cleanup at 0.004", `server cleanup at ${sim.now()}`]);
  });

  it("restarting a running host crashes it first; restarting a host whose main returned runs it again", async () => {
    const sim = new Sim({ seed: 1 });
    const runs: number[] = [];
    sim.host("worker", function* () {
      runs.push(sim.now());
      yield* sleep(10);
    });
    sim.client("client", function* () {
      yield* sleep(1);
      sim.restart("worker"); // running: cancelled, started again
      yield* sleep(20); // it returns at 11
      sim.restart("worker");
      yield* sleep(1);
      sim.crash("worker");
      sim.crash("worker"); // already down: nothing more
      return runs.length;
    });
    expect(await sim.run()).toEqual([3]);
    expect(runs).toEqual([0, 1, 21]);
  });

  it("a crash of a client cancels it; the run waits for its restart to finish", async () => {
    const sim = new Sim({ seed: 1 });
    let attempts = 0;
    sim.client("flaky", function* () {
      attempts++;
      yield* sleep(10);
      return attempts;
    });
    sim.host("chaos", function* () {
      yield* sleep(5);
      sim.crash("flaky");
      yield* sleep(5);
      sim.restart("flaky");
    });
    expect(await sim.run()).toEqual([2]);
    expect(sim.now()).toBe(20);
  });

  it("the end of the world warns of no swallowed cancellation (the kernel's watchdog counts real time, not the world's)", async () => {
    const warnings: string[] = [];
    const listen = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", listen);
    try {
      // The world ends at 2 simulated ms; the supervisors of hosts whose main returned are cancelled
      // then, and step once more after the world stopped. Real time past 2 s makes a watchdog that
      // compared the world's clock with the real one see a 2 s swallow.
      while (performance.now() < 2500) await new Promise((resolve) => setTimeout(resolve, 50));
      const sim = new Sim({ seed: 1 });
      sim.host("server", function* () {
        yield* sleep(0.001);
      });
      sim.client("client", function* () {
        yield* sleep(0.002);
      });
      await sim.run();
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
    } finally {
      process.off("warning", listen);
    }
    expect(warnings.filter((w) => w.includes("cancelled"))).toEqual([]);
  });

  it("a socket held with `using` on a crashed host is closed and its port free for the restart; the peer is reset", async () => {
    const sim = new Sim({ seed: 1 });
    sim.network({ latency: 0.001 });
    const servers: Socket[] = [];
    sim.host("server", function* () {
      using server = tcpv4();
      servers.push(server);
      yield* bindAndListen(server, { host: "0.0.0.0", port: 7 });
      const [peer] = yield* accept(server);
      using _ = peer;
      yield* read(peer, Buffer.alloc(1));
    });
    sim.client("client", function* () {
      const sock = tcpv4();
      yield* connect(sock, { host: "server", port: 7 });
      sim.crash("server");
      const reset = (yield* failure(() => read(sock, Buffer.alloc(1)))).code;
      yield* close(sock);
      sim.restart("server");
      const again = tcpv4();
      yield* connect(again, { host: "server", port: 7 }); // the restarted main could bind port 7
      yield* write(again, "x");
      yield* close(again);
      yield* sleep(1); // the second main reads the byte and returns
      return [reset, servers.map((s) => s.state)];
    });
    expect(await sim.run()).toEqual([["ECONNRESET", ["closed", "closed"]]]);
  });

  it("faults name hosts that exist; crash, restart, reset and signal act on a running world only", () => {
    const sim = new Sim({ seed: 1 });
    sim.host("a", function* () {});
    sim.host("b", function* () {});
    expect(() => sim.partition("a", "c")).toThrow(/no host is named "c" \(the hosts: a, b\)/);
    expect(() => sim.hold("a", "a")).toThrow(TypeError);
    expect(() => sim.crash("a")).toThrow(/running world/);
    expect(() => sim.restart("a")).toThrow(/running world/);
    expect(() => sim.reset("a", "b")).toThrow(/running world/);
    expect(() => sim.signal("SIGINT")).toThrow(/running world/);
    expect(() => sim.signal("INT" as NodeJS.Signals)).toThrow(TypeError);
    sim.partition("a", "b"); // links may be cut before the run
    sim.repair("a", "b");
  });
});

describe("what belongs to a host", () => {
  it("signals raised with sim.signal reach the handlers set with onSignal; real signals never do", async () => {
    const sim = new Sim({ seed: 1 });
    sim.client("server", function* () {
      let stop = false;
      const wake = new L.Trigger();
      onSignal("SIGUSR2", function* () {
        stop = true;
        wake.signal();
      });
      process.kill(process.pid, "SIGUSR2"); // a real one: the world does not hear it
      yield* sleep(1);
      const heardReal = stop;
      yield* wake.wait();
      return [heardReal, stop, sim.now()];
    });
    sim.host("admin", function* () {
      yield* sleep(3);
      sim.signal("SIGUSR2");
    });
    const realHeard: string[] = [];
    const listener = (s: string): void => void realHeard.push(s);
    process.on("SIGUSR2", listener);
    try {
      expect(await sim.run()).toEqual([[false, true, 3]]);
      await new Promise((r) => setTimeout(r, 50));
      expect(realHeard).toEqual(["SIGUSR2"]);
    } finally {
      process.off("SIGUSR2", listener);
    }
  });

  it("a task outside every host (a signal handler) cannot make sockets", async () => {
    const sim = new Sim({ seed: 1 });
    sim.client("server", function* () {
      const done = new L.Trigger();
      let error: unknown = null;
      onSignal("SIGUSR2", function* () {
        try {
          tcpv4();
        } catch (e) {
          error = e;
        }
        done.signal();
      });
      sim.signal("SIGUSR2");
      yield* done.wait();
      return error instanceof TypeError && /belongs to none/.test(error.message);
    });
    expect(await sim.run()).toEqual([true]);
  });

  it("a host's sockets are its own: ports of one host are free on another", async () => {
    const sim = new Sim({ seed: 1 });
    for (const name of ["a", "b"]) {
      sim.host(name, function* () {
        const s = tcpv4();
        yield* bindAndListen(s, { host: "0.0.0.0", port: 80 });
        const [c] = yield* accept(s);
        yield* write(c, name);
        yield* close(c);
      });
    }
    sim.client("client", function* () {
      const names: string[] = [];
      for (const name of ["a", "b"]) {
        const sock = tcpv4();
        yield* connect(sock, { host: name, port: 80 });
        const buf = Buffer.alloc(1);
        yield* read(sock, buf);
        names.push(buf.toString());
        yield* close(sock);
      }
      return names;
    });
    expect(await sim.run()).toEqual([["a", "b"]]);
  });
});
