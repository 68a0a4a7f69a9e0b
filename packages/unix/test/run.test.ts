import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { NoParent, Ownership } from "@bobbin/sync";
import { thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { LibuvBackend } from "../src/backend/index.js";
import { type Backend, defineBackend, libuv, onSignal, run, sleep, tcpv4, udpv4, withTimeout } from "../src/index.js";

describe("run", () => {
  it("runs main with the libuv backend by default and settles with its value or error", async () => {
    expect(
      await run(function* () {
        yield* sleep(0.001);
        return 42;
      }),
    ).toBe(42);
    await expect(
      run(function* () {
        yield* sleep(0.001);
        throw new Error("main failed");
      }),
    ).rejects.toThrow("main failed");
  });

  it("makes one backend per run with the factory", async () => {
    const made: Backend[] = [];
    const factory = (domain: number): Backend => {
      expect(domain).toBe(0);
      const b = libuv();
      made.push(b);
      return b;
    };
    await Promise.all([
      run(
        function* () {
          yield* sleep(0.01);
        },
        { backend: factory },
      ),
      run(
        function* () {
          yield* sleep(0.01);
        },
        { backend: factory },
      ),
    ]);
    expect(made).toHaveLength(2);
    expect(made[0]).toBeInstanceOf(LibuvBackend);
    expect(made[0]).not.toBe(made[1]);
    expect(made[0]!.name).toBe("libuv");
  });

  it("keeps core's rules: StillHasChildren, the abort signal", async () => {
    await expect(
      run(function* () {
        B.spawn(function* () {
          yield* sleep(0.01);
        });
      }),
    ).rejects.toBeInstanceOf(B.StillHasChildren);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 20);
    await expect(
      run(
        function* () {
          yield* sleep(10);
        },
        { signal: controller.signal },
      ),
    ).rejects.toThrow("stop");
  });

  it("main is the root task, as under core's run: no parent, the uids and messages of core's run", async () => {
    /** What a program sees of its task tree, in uids relative to main's. */
    function* tree(): Generator<B.Instruction, unknown, unknown> {
      const main = B.self();
      const child = B.spawn(function* () {
        return B.self().parent?.uid;
      });
      return { parent: main.parent, childUid: child.uid - main.uid, childsParent: (yield* B.awaitExn(child)) === main.uid };
    }
    const expected = { parent: null, childUid: 1, childsParent: true };
    expect(await B.run(tree)).toEqual(expected);
    expect(await run(tree)).toEqual(expected);
    // The errors that name tasks name the program's own, with the same uids (resources as <r>: their uids count across runs).
    const messages = async (start: typeof B.run): Promise<string[]> => {
      const out: string[] = [];
      const fail = (error: unknown) => out.push((error as Error).message.replace(/resource \d+/, "resource <r>"));
      await start(function* () {
        B.spawn(function* () {});
      }).catch(fail);
      await start(function* () {
        Ownership.own(Ownership.create(1, () => {}));
      }).catch(fail);
      await start(function* () {
        const r = Ownership.create(1, () => {});
        Ownership.own(r);
        try {
          Ownership.transfer(r);
        } finally {
          Ownership.release(r);
        }
      }).catch(fail);
      return out;
    };
    const core = await messages(B.run);
    expect(core).toHaveLength(3);
    expect(core[0]).toMatch(/returned while its children/);
    expect(core[1]).toMatch(/returned normally while still owning 1 resource/);
    expect(core[2]).toMatch(/is the root of its run and has no parent to transfer resource <r>/);
    expect(await messages(run)).toEqual(core);
  });

  it("Ownership.transfer from main throws NoParent, and the resource stays main's", async () => {
    let finalised = 0;
    await run(function* () {
      const r = Ownership.create("socket", () => void finalised++);
      Ownership.own(r);
      expect(thrownBy(() => Ownership.transfer(r))).toBeInstanceOf(NoParent);
      expect(Ownership.owned()).toEqual([r]);
      Ownership.release(r);
    });
    expect(finalised).toBe(1);
  });

  it("checks its arguments and the backend (synchronously)", () => {
    expect(thrownBy(() => run("main" as never))).toBeInstanceOf(TypeError);
    expect(thrownBy(() => run(function* () {}, { events: () => null } as never))).toBeInstanceOf(TypeError);
    expect(thrownBy(() => run(function* () {}, { backend: {} as never }))).toBeInstanceOf(TypeError);
    const partial = thrownBy(() => run(function* () {}, { backend: () => ({ select() {}, interrupt() {} }) as never })) as Error;
    expect(partial).toBeInstanceOf(TypeError);
    expect(partial.message).toMatch(/lacks socket, bindAndListen/);
    expect(thrownBy(() => run(function* () {}, { pollEvery: 0 }))).toBeInstanceOf(RangeError);
  });

  it("operations need a task of @bobbin/unix's run", async () => {
    expect((thrownBy(() => tcpv4()) as Error).message).toMatch(/inside a task/);
    expect(thrownBy(() => sleep(1))).toBeInstanceOf(TypeError);
    await B.run(function* () {
      expect((thrownBy(() => udpv4()) as Error).message).toMatch(/@bobbin\/unix/);
      expect(thrownBy(() => sleep(1))).toBeInstanceOf(TypeError);
      expect(() => withTimeout(1, B.yieldNow())).not.toThrow(); // made lazily…
      const e = yield* (function* () {
        try {
          yield* withTimeout(1, B.yieldNow()); // …and refused when it runs
        } catch (error) {
          return error;
        }
        return null;
      })();
      expect(e).toBeInstanceOf(TypeError);
    });
  });

  it("defineBackend names a factory for worker domains; run still makes dom0's backend with it, once", async () => {
    const made: number[] = [];
    const factory = (domain: number): Backend => {
      made.push(domain);
      return libuv();
    };
    expect(defineBackend(import.meta.url, "counted", factory)).toBe(factory);
    const backend = await run(
      function* () {
        yield* sleep(0.001);
        return L.currentEvents();
      },
      { backend: factory },
    );
    expect(made).toEqual([0]);
    expect(backend).toBeInstanceOf(LibuvBackend);
    expect(thrownBy(() => defineBackend("fib.ts", "x", factory))).toBeInstanceOf(TypeError);
    expect(thrownBy(() => defineBackend(import.meta.url, "", factory))).toBeInstanceOf(TypeError);
    expect(thrownBy(() => defineBackend(import.meta.url, "x", 42 as never))).toBeInstanceOf(TypeError);
  });

  it("operations find the backend of their domain; core's events alone are not one", async () => {
    await run(function* () {
      expect(L.currentEvents()).toBeInstanceOf(LibuvBackend);
      expect(tcpv4().backend).toBe(L.currentEvents());
    });
    const events = libuv(); // a backend object, but not made by @bobbin/unix's run
    await L.runKernel(
      function* () {
        expect((thrownBy(() => sleep(1)) as Error).message).toMatch(/not @bobbin\/core's run/);
        expect(thrownBy(() => onSignal("SIGUSR2", function* () {}))).toBeInstanceOf(TypeError);
      },
      { events: () => events },
    );
  });
});
