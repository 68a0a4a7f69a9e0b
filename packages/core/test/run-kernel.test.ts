// checkRunOptionNames: the one check of a run's option names, which B.run, runKernel
// and a runtime's own run (before it makes anything, in messages naming itself) use.
import { describe, expect, it } from "vitest";
import * as B from "../src/index.js";
import * as L from "../src/lowlevel/index.js";

describe("checkRunOptionNames", () => {
  const names = ["backend", ...L.runOptionNames, "policy"];
  const elsewhere = (seam: string) => `serve({ ${seam} }): not here`;

  it("takes the names given, the seams among them included", () => {
    expect(() => L.checkRunOptionNames("serve(main, options)", { backend: 1, seed: 2, policy: {} }, names, elsewhere)).not.toThrow();
  });

  it("refuses a seam not among the names in the caller's message, whatever its place", () => {
    expect(() => L.checkRunOptionNames("serve(main, options)", { seed: 2, tracer: {} }, names, elsewhere)).toThrow(
      new TypeError("serve({ tracer }): not here"),
    );
  });

  it("takes a seam given as undefined as not given, and names the unknown key after it", () => {
    expect(() => L.checkRunOptionNames("serve(main, options)", { events: undefined }, names, elsewhere)).not.toThrow();
    expect(() => L.checkRunOptionNames("serve(main, options)", { events: undefined, domain: 2 }, names, elsewhere)).toThrow(
      new TypeError(`serve(main, options): unknown option "domain"; the options are ${names.join(", ")}`),
    );
  });

  it("is B.run's check: a seam left undefined is not given there either", async () => {
    const body = function* () {
      return 1;
    };
    for (const seam of L.kernelSeamNames) expect(await B.run(body, { [seam]: undefined } as never)).toBe(1);
  });
});
