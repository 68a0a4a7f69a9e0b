import * as B from "@bobbin/core";
import { errorOf, thrownBy } from "@bobbin/test-support";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AlreadyOwned, NoParent, NotOwner, Ownership, type Resource, ResourceLeaked } from "../src/index.js";
import { forever, pause } from "./helpers.js";

/** A resource whose finaliser records its name in `closed`. */
function tracked(name: string, closed: string[]): Resource<string> {
  return Ownership.create(name, (v) => {
    closed.push(v);
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("Ownership: own, check, disown, release", () => {
  it("create makes an unowned resource; own makes the current task its owner", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const r = tracked("fd", closed);
      expect(r.owner).toBeNull();
      expect(r.value).toBe("fd");
      expect(thrownBy(() => Ownership.check(r))).toBeInstanceOf(NotOwner);
      Ownership.own(r);
      expect(r.owner).toBe(B.self());
      expect(Ownership.owned()).toEqual([r]);
      Ownership.check(r);
      Ownership.release(r);
      expect(closed).toEqual(["fd"]);
      expect(r.isReleased).toBe(true);
      expect(Ownership.owned()).toEqual([]);
    });
  });

  it("own twice is AlreadyOwned, whoever tries", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const r = tracked("r", closed);
      Ownership.own(r);
      const again = thrownBy(() => Ownership.own(r));
      expect(again).toBeInstanceOf(AlreadyOwned);
      expect((again as Error).name).toBe("AlreadyOwned");
      expect((again as Error).message).toMatch(/already owns resource/);
      const other = B.spawn(function* () {
        Ownership.own(r);
      });
      const error = errorOf(yield* B.awaitTask(other));
      expect(error).toBeInstanceOf(AlreadyOwned);
      expect((error as Error).message).toContain(`task ${B.self().uid} owns it`);
      Ownership.release(r);
    });
    expect(closed).toEqual(["r"]);
  });

  it("check, disown, release and transfer by a task that does not own the resource are NotOwner", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const r = tracked("r", closed);
      Ownership.own(r);
      const me = B.self().uid;
      for (const op of ["check", "disown", "release", "transfer"] as const) {
        const child = B.spawn(function* () {
          Ownership[op](r);
        });
        const error = errorOf(yield* B.awaitTask(child));
        expect(error).toBeInstanceOf(NotOwner);
        expect((error as Error).name).toBe("NotOwner");
        expect((error as Error).message).toContain(`owned by task ${me}`);
      }
      expect(r.owner).toBe(B.self());
      expect(closed).toEqual([]); // nobody else released it
      Ownership.release(r);
    });
  });

  it("disown gives a resource up without finalising it; another task may own it then", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const r = tracked("r", closed);
      Ownership.own(r);
      Ownership.disown(r);
      expect(r.owner).toBeNull();
      expect(thrownBy(() => Ownership.check(r))).toBeInstanceOf(NotOwner);
      const child = B.spawn(function* () {
        Ownership.own(r);
        Ownership.check(r);
        Ownership.release(r);
      });
      yield* B.awaitExn(child);
    });
    expect(closed).toEqual(["r"]);
  });

  it("a released resource is dead: its finaliser ran once, and it cannot be owned or checked", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const r = tracked("r", closed);
      Ownership.own(r);
      Ownership.release(r);
      expect(thrownBy(() => Ownership.own(r))).toBeInstanceOf(TypeError);
      const error = thrownBy(() => Ownership.check(r));
      expect(error).toBeInstanceOf(NotOwner);
      expect((error as Error).message).toMatch(/was released/);
      expect(thrownBy(() => Ownership.release(r))).toBeInstanceOf(NotOwner);
    });
    expect(closed).toEqual(["r"]);
  });

  it("release throws its finaliser's error, and the resource is released all the same", async () => {
    await B.run(function* () {
      const r = Ownership.create(1, () => {
        throw new Error("close failed");
      });
      Ownership.own(r);
      expect(() => Ownership.release(r)).toThrow("close failed");
      expect(r.isReleased).toBe(true);
      expect(Ownership.owned()).toEqual([]);
    });
  });

  it("rejects misuse with TypeErrors", async () => {
    expect(() => Ownership.create(1, "no" as never)).toThrow(TypeError);
    const r = Ownership.create(1, () => undefined);
    expect(() => Ownership.own(r)).toThrow(TypeError); // outside a task
    await B.run(function* () {
      expect(() => Ownership.check({} as Resource)).toThrow(TypeError);
      const bad = B.spawn(function* () {
        return 1;
      });
      yield* B.awaitExn(bad);
      expect(() => B.spawn({ give: [42] }, function* () {})).toThrow(TypeError);
    });
  });
});

describe("Ownership: moving resources between tasks", () => {
  it("spawn({ give }) moves ownership to the child", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const a = tracked("a", closed);
      const b = tracked("b", closed);
      Ownership.own(a);
      Ownership.own(b);
      const child = B.spawn({ give: [a, b] }, function* () {
        Ownership.check(a);
        Ownership.check(b);
        Ownership.release(a);
        Ownership.release(b);
        return Ownership.owned().length;
      });
      expect(a.owner).toBe(child);
      expect(thrownBy(() => Ownership.check(a))).toBeInstanceOf(NotOwner);
      expect(Ownership.owned()).toEqual([]);
      expect(yield* B.awaitExn(child)).toBe(0);
    });
    expect(closed).toEqual(["a", "b"]);
  });

  it("giving a resource the parent does not own fails the spawn in the parent, and moves nothing", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const mine = tracked("mine", closed);
      const nobodys = tracked("nobody's", closed);
      Ownership.own(mine);
      const error = thrownBy(() => B.spawn({ give: [mine, nobodys] }, function* () {}));
      expect(error).toBeInstanceOf(NotOwner);
      expect((error as Error).message).toMatch(/cannot give/);
      expect(mine.owner).toBe(B.self());
      Ownership.release(mine);
    });
    expect(closed).toEqual(["mine"]);
  });

  it("g.spawn({ give }) in a group moves what the spawning task owns (not the group's owner) to the new task", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const owner = B.self();
      const owners = tracked("owner's", closed);
      Ownership.own(owners);
      yield* B.group({ name: "acceptor" }, function* (g) {
        // The body accepted a client: it owns it, and hands it to a handler of the group.
        const client = tracked("client", closed);
        Ownership.own(client);
        const handler = g.spawn({ give: [client] }, function* () {
          Ownership.check(client);
          yield* pause(1);
          Ownership.release(client);
        });
        expect(handler.parent).toBe(owner);
        expect(client.owner).toBe(handler);
        // The group's owner is the handler's parent, but not the one giving: its resource stays its own.
        expect(thrownBy(() => g.spawn({ give: [owners] }, function* () {}))).toBeInstanceOf(NotOwner);
      });
      expect(owners.owner).toBe(owner);
      Ownership.release(owners);
    });
    expect(closed).toEqual(["client", "owner's"]);
  });

  it("transfer moves ownership to the parent", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const child = B.spawn(function* () {
        const r = tracked("accepted", closed);
        Ownership.own(r);
        Ownership.transfer(r);
        expect(thrownBy(() => Ownership.check(r))).toBeInstanceOf(NotOwner);
        return r;
      });
      const r = yield* B.awaitExn(child);
      expect(r.owner).toBe(B.self());
      Ownership.check(r);
      Ownership.release(r);
    });
    expect(closed).toEqual(["accepted"]);
  });

  it("transfer from the root task is NoParent", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const r = tracked("r", closed);
      Ownership.own(r);
      const error = thrownBy(() => Ownership.transfer(r));
      expect(error).toBeInstanceOf(NoParent);
      expect((error as Error).name).toBe("NoParent");
      expect((error as Error).message).toMatch(/root of its run/);
      expect(r.owner).toBe(B.self());
      Ownership.release(r);
    });
  });
});

describe("Ownership: finalisers when the owner ends", () => {
  it("a task that fails runs the finalisers of what it still owns, newest first", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const child = B.spawn(function* () {
        Ownership.own(tracked("first", closed));
        Ownership.own(tracked("second", closed));
        yield* pause(1);
        throw new Error("crash");
      });
      const r = yield* B.awaitTask(child);
      expect((errorOf(r) as Error).message).toBe("crash"); // its own error, not ResourceLeaked
      expect(closed).toEqual(["second", "first"]);
    });
  });

  it("a cancelled task runs its finalisers before cancel returns, its subtree's included", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const child = B.spawn(function* () {
        Ownership.own(tracked("child's", closed));
        const grandchild = B.spawn(function* () {
          Ownership.own(tracked("grandchild's", closed));
          yield* forever();
        });
        yield* B.awaitExn(grandchild);
      });
      yield* pause(3);
      expect(closed).toEqual([]);
      yield* B.cancel(child);
      expect(closed).toEqual(["grandchild's", "child's"]);
    });
  });

  it("a resource given to a child that is cancelled is finalised by the child", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const r = tracked("client", closed);
      Ownership.own(r);
      const handler = B.spawn({ give: [r] }, function* () {
        yield* forever();
      });
      yield* pause(1);
      yield* B.cancel(handler);
      expect(closed).toEqual(["client"]);
      expect(r.isReleased).toBe(true);
    });
  });

  it("a task that returns normally still owning resources finalises them and fails the run with ResourceLeaked", async () => {
    const closed: string[] = [];
    let leakerUid = 0;
    const run = B.run(function* () {
      const leaker = B.spawn(function* () {
        leakerUid = B.self().uid;
        Ownership.own(tracked("x", closed));
        Ownership.own(tracked("y", closed));
        return "forgot to release";
      });
      yield* B.awaitTask(leaker);
      yield* pause(1);
    });
    const error = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ResourceLeaked);
    expect((error as Error).name).toBe("ResourceLeaked");
    expect((error as ResourceLeaked).task).toBe(leakerUid);
    expect((error as ResourceLeaked).resources).toBe(2);
    expect(closed).toEqual(["y", "x"]);
  });

  it("the root task leaking fails the run too", async () => {
    const closed: string[] = [];
    await expect(
      B.run(function* () {
        Ownership.own(tracked("root's", closed));
      }),
    ).rejects.toBeInstanceOf(ResourceLeaked);
    expect(closed).toEqual(["root's"]);
  });

  it("a finaliser that throws when its owner is cancelled is the owner's outcome (cancel throws it), and the others still run", async () => {
    const closed: string[] = [];
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    const failure = new Error("finaliser failed");
    const seen = await B.run(function* () {
      const child = B.spawn(function* () {
        Ownership.own(tracked("ok", closed));
        Ownership.own(
          Ownership.create("bad", () => {
            throw failure;
          }),
        );
        yield* forever();
      });
      yield* pause(1);
      try {
        yield* B.cancel(child);
      } catch (error) {
        return { error, status: child.status };
      }
      return { error: null, status: child.status };
    });
    expect(closed).toEqual(["ok"]);
    expect(seen).toEqual({ error: failure, status: "failed" });
    expect(warn).not.toHaveBeenCalled();
  });

  it("a finaliser that throws at a normal return: its error travels with ResourceLeaked, not as a warning", async () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    const failure = new Error("close failed");
    const error = await B.run(function* () {
      yield* B.awaitTask(
        B.spawn(function* leaker() {
          Ownership.own(
            Ownership.create("bad", () => {
              throw failure;
            }),
          );
        }),
      );
    }).then(
      () => undefined,
      (e: unknown) => e as ResourceLeaked,
    );
    expect(error).toBeInstanceOf(ResourceLeaked);
    expect(error!.errors).toEqual([failure]);
    expect(error!.cause).toBe(failure);
    expect(error!.message).toMatch(
      /^leaker#2 returned normally while still owning 1 resource\(s\); their finalisers ran \(1 threw: Error: close failed\)/,
    );
    expect(warn).not.toHaveBeenCalled();
  });

  it("Miou's accept-or-die: resources given to the losing task of awaitFirst are finalised", async () => {
    const closed: string[] = [];
    await B.run(function* () {
      const socket = tracked("listening socket", closed);
      Ownership.own(socket);
      const accept = B.spawn({ give: [socket] }, function* () {
        Ownership.check(socket);
        yield* forever(); // no client ever comes
        return "accept" as const;
      });
      const die = B.spawn(function* () {
        yield* pause(2);
        return "die" as const;
      });
      const first = yield* B.awaitFirst<"accept" | "die">([accept, die]);
      expect(first).toEqual({ ok: true, value: "die" });
      expect(closed).toEqual(["listening socket"]); // finalised by the cancelled accept task
    });
  });
});
