import { Sim } from "@bobbin/sim";
import { describe, expect, it } from "vitest";
import { echoWorld } from "../../src/sim/echo.js";

describe("chapter 8's echo server in a simulated world", () => {
  it("under partitions, resets and crashes, every session that ends echoes every byte, and every client gets through", async () => {
    const faults = { partitions: 0, resets: 0, crashes: 0 };
    for (let seed = 1; seed <= 8; seed++) {
      const sim = new Sim({ seed, policy: "random" });
      sim.network({ latency: { min: 0.0005, max: 0.01 } });
      const world = echoWorld(sim, { clients: 3, sessions: 4, messages: 20, think: 0.01 });
      const results = await sim.run();
      expect(results.length).toBe(4); // the server's stats, then each client's report
      for (const [name, report] of world.clients) {
        expect(report.sessions, `${name} with seed ${seed}`).toBe(4);
        expect(report.roundTrips).toBeGreaterThanOrEqual(4 * 20);
        expect(report.bytes).toBeGreaterThanOrEqual(4 * 20 * 64);
      }
      expect(world.stats).not.toBeNull(); // the last incarnation stopped on SIGINT
      expect(results[0]).toEqual(world.stats);
      faults.partitions += world.chaos.partitions;
      faults.resets += world.chaos.resets;
      faults.crashes += world.chaos.crashes;
    }
    // the seeds did break things, of every kind
    expect(faults.partitions).toBeGreaterThan(0);
    expect(faults.resets).toBeGreaterThan(0);
    expect(faults.crashes).toBeGreaterThan(0);
  });

  it("without faults, the server echoes every byte of every session and reports them", async () => {
    const sim = new Sim({ seed: 3 });
    const world = echoWorld(sim, { clients: 5, sessions: 2, messages: 50, size: 100, chaos: false });
    await sim.run();
    for (const report of world.clients.values()) expect(report).toEqual({ sessions: 2, broken: 0, roundTrips: 100, bytes: 10_000 });
    expect(world.stats).toEqual({ domain: 0, connections: 10, bytes: 50_000 });
  });

  it("the same seed makes the same run: the same faults, reports and trace", async () => {
    const once = async () => {
      const sim = new Sim({ seed: 99, policy: "random", trace: true });
      const world = echoWorld(sim, { clients: 2, sessions: 3, messages: 10, think: 0.05 });
      await sim.run();
      return { chaos: world.chaos, clients: [...world.clients.values()], trace: String(sim.trace()) };
    };
    const a = await once();
    expect(await once()).toEqual(a);
    expect(a.trace).toMatch(/ echo crash\n| world reset | world partition /);
  });
});
