/** The HTTP JSON service in a simulated world: its code unchanged, under partitions, resets and crashes. */
import { check, Sim } from "@bobbin/sim";
import { describe, expect, it } from "vitest";
import { type HttpClientReport, type HttpWorld, httpWorld } from "../../src/sim/http.js";

function total(world: HttpWorld, key: keyof HttpClientReport): number {
  return [...world.clients.values()].reduce((n, r) => n + r[key], 0);
}

describe("the HTTP JSON service, simulated", () => {
  it("without faults: every operation answered as asked, and each abandoned slow request cancelled on the service's side", async () => {
    const sim = new Sim({ seed: 11 });
    const world = httpWorld(sim, { chaos: false, operations: 20 });
    await sim.run();
    expect(total(world, "retried")).toBe(0);
    expect(total(world, "badGateways")).toBe(0);
    expect(total(world, "stored") + total(world, "checked") + total(world, "quotes") + total(world, "abandoned")).toBe(3 * 20);
    expect(total(world, "abandoned")).toBeGreaterThan(0);
    expect(world.services).toHaveLength(1);
    expect(world.services[0]!.errors).toEqual([]);
    expect(world.services[0]!.slowCancelled).toBe(total(world, "abandoned"));
  });

  it("under partitions, resets and crashes, over many seeds: reads match writes of the same incarnation, quotes are right or 502, no handler fails", async () => {
    const worlds: HttpWorld[] = [];
    const report = await check(
      (sim) => {
        worlds.push(httpWorld(sim, { operations: 12 }));
      },
      { runs: 30, seed: 20_241_127 },
    );
    expect(report.runs).toBe(30);
    // The faults happened, and the clients went through them (each check is made in the world, and fails its run).
    const sum = (f: (w: HttpWorld) => number) => worlds.reduce((n, w) => n + f(w), 0);
    expect(sum((w) => w.chaos.crashes)).toBeGreaterThan(0);
    expect(sum((w) => w.chaos.resets)).toBeGreaterThan(0);
    expect(sum((w) => w.chaos.partitions)).toBeGreaterThan(0);
    expect(sum((w) => total(w, "retried"))).toBeGreaterThan(0);
    expect(sum((w) => total(w, "checked"))).toBeGreaterThan(0);
    expect(sum((w) => w.services.length)).toBeGreaterThan(30); // restarts made new incarnations
  }, 120_000); // 30 simulated runs, CPU only: about 4 s alone, over 30 s with three suites on two cores
});
