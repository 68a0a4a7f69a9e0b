/** lookup: the system's resolver as an operation. */

import * as B from "@bobbin/core";
import { failure, thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { lookup, run } from "../src/index.js";

describe("lookup", () => {
  it("resolves localhost and IP literals, in the family asked", async () => {
    const [any, v4, literal] = await run(function* () {
      return [yield* lookup("localhost"), yield* lookup("localhost", { family: 4 }), yield* lookup("::1")];
    });
    expect([4, 6]).toContain(any!.family);
    expect(v4).toEqual({ address: "127.0.0.1", family: 4 });
    expect(literal).toEqual({ address: "::1", family: 6 });
  });

  it("throws the resolver's error to the task", async () => {
    const error = await run(function* () {
      // .invalid never resolves (RFC 2606); the lookup stays on this machine's resolver
      return yield* failure(() => lookup("no-such-host.invalid"));
    });
    expect(["ENOTFOUND", "EAI_AGAIN"]).toContain(error.code);
  });

  it("a cancelled lookup leaves at once", async () => {
    const status = await run(function* () {
      const t = B.spawn(function* () {
        return yield* lookup("localhost");
      });
      yield* B.yieldNow();
      yield* B.cancel(t);
      return t.status;
    });
    expect(status).toBe("cancelled");
  });

  it("checks its arguments", () => {
    expect(String(thrownBy(() => lookup("")))).toMatch(/lookup\(host\) expects a host name/);
    expect(thrownBy(() => lookup("localhost", { family: 5 as never }))).toBeInstanceOf(RangeError);
  });
});
