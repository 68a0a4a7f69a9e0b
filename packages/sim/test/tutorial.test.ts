// The README's tutorial, step by step: its code is this file's.
import * as B from "@bobbin/core";
import { Mutex } from "@bobbin/sync";
import { accept, bindAndListen, close, connect, read, type Socket, sleep, tcpv4, withTimeout, write } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { type Build, CheckFailed, check, replay, Sim } from "../src/index.js";

// 1. A server: a bank holding 100, that serves "withdraw <amount>" requests.
function bank(lock: Mutex | null = null) {
  return function* bank(): Generator<B.Instruction, never, unknown> {
    let balance = 100;
    function* serve(client: Socket): Generator<B.Instruction, void, unknown> {
      const buf = Buffer.alloc(64);
      const n = yield* read(client, buf);
      const amount = Number(buf.toString("utf8", 0, n).split(" ")[1]);
      let reply = "refused";
      if (lock !== null) yield* lock.lock();
      try {
        if (balance >= amount) {
          yield* sleep(0.01); // writes the withdrawal to its ledger first
          balance -= amount;
          reply = `ok ${balance}`;
        }
      } finally {
        if (lock !== null) lock.unlock();
      }
      yield* write(client, reply);
      yield* close(client);
    }
    const server = tcpv4();
    yield* bindAndListen(server, { host: "0.0.0.0", port: 7000 });
    const clients = B.orphans<void>();
    for (;;) {
      for (let t = B.care(clients); t; t = B.care(clients)) yield* B.awaitTask(t);
      const [client] = yield* accept(server);
      B.spawn({ orphans: clients }, serve, client);
    }
  };
}

function* withdraw(amount: number): Generator<B.Instruction, string, unknown> {
  const sock = tcpv4();
  try {
    yield* connect(sock, { host: "bank", port: 7000 });
    yield* write(sock, `withdraw ${amount}`);
    const buf = Buffer.alloc(64);
    const n = yield* read(sock, buf);
    return buf.toString("utf8", 0, n);
  } finally {
    yield* close(sock);
  }
}

describe("the tutorial", () => {
  it("2. simulate it", async () => {
    const sim = new Sim({ seed: 1 });
    sim.host("bank", bank());
    sim.client("alice", function* () {
      yield* sleep(3600); // an hour later (no real time passes)
      return yield* withdraw(30);
    });
    expect(await sim.run()).toEqual(["ok 70"]);
    expect(sim.now()).toBeGreaterThan(3600);
  });

  it("3. break the network", async () => {
    const sim = new Sim({ seed: 1 });
    sim.network({ latency: { min: 0.001, max: 0.05 } });
    sim.host("bank", bank());
    sim.client("alice", function* () {
      sim.partition("alice", "bank");
      const late = B.spawn(withdraw, 30); // its SYNs are lost, and sent again after 1, 2, 4… s
      yield* sleep(5);
      sim.repair("alice", "bank");
      const first = yield* B.awaitExn(late); // "ok 70", once a SYN gets through
      sim.crash("bank"); // its tasks are cancelled, its connections reset
      const down = yield* B.awaitTask(
        B.spawn(function* () {
          return yield* withTimeout(1, withdraw(30)); // a crashed host answers nothing
        }),
      );
      sim.restart("bank"); // main runs again: a new bank, with 100 again
      const second = yield* withdraw(30);
      return [first, down.ok ? "answered" : (down.error as Error).name, second];
    });
    expect(await sim.run()).toEqual([["ok 70", "Timeout", "ok 70"]]);
  });
});

/** Step 4's world: alice and bob withdraw 80 each at random times. */
function world(lock: Mutex | null): Build {
  return (sim) => {
    sim.host("bank", bank(lock));
    for (const name of ["alice", "bob"]) {
      sim.client(name, function* () {
        yield* sleep(Math.random()); // each comes at its own time
        const reply = yield* withdraw(80);
        if (reply.startsWith("ok -")) throw new Error(`overdrawn: ${reply}`);
        return reply;
      });
    }
  };
}

describe("the tutorial, continued", () => {
  it("4. find a bug; 5. replay it, and fix it", async () => {
    const failed = (await check(world(null), { runs: 100, seed: 1 }).catch((e: unknown) => e)) as CheckFailed;
    expect(failed).toBeInstanceOf(CheckFailed);
    expect((failed.cause as Error).message).toBe("overdrawn: ok -60");
    let sim: Sim | null = null;
    const again = await replay(
      (s) => {
        sim = s;
        world(null)(s);
      },
      failed.repro,
      { trace: true },
    ).catch((e: unknown) => e);
    expect((again as Error).message).toBe("overdrawn: ok -60");
    expect(String(sim!.trace())).toMatch(/ (alice|bob) main failed: Error: overdrawn: ok -60\n/);
    await expect(check(world(new Mutex()), { runs: 100, seed: 1 })).resolves.toEqual({ runs: 100, seed: 1 });
  });
});
