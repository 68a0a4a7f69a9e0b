// run's options are checked before a backend is made, in a message that names
// @bobbin/unix's own run and options (not the kernel's runKernel and its seams).
import * as L from "@bobbin/core/lowlevel";
import { describe, expect, it } from "vitest";
import { runOnBackend } from "../src/backend/index.js";
import { run } from "../src/index.js";

const main = function* () {
  return 1;
};

describe("run's options", () => {
  it("refuses an unknown option, naming run and the options it takes", () => {
    let made = 0;
    const backend = () => {
      made++;
      throw new Error("no backend should be made");
    };
    expect(() => run(main, { domain: 2, backend } as never)).toThrow(
      `run(main, options): unknown option "domain"; the options are backend, ${L.runOptionNames.join(", ")}`,
    );
    expect(made).toBe(0);
    expect(L.runOptionNames).toContain("domains");
  });

  it("lists the seams among runOnBackend's options", () => {
    expect(() => runOnBackend(main, { timeout: 1 } as never)).toThrow(
      `runOnBackend(main, options): unknown option "timeout"; the options are backend, ${L.runOptionNames.join(", ")}, random, policy, tracer`,
    );
  });

  it("refuses the kernel's seams and events given to a program's run, before a backend is made", () => {
    let made = 0;
    const backend = () => {
      made++;
      throw new Error("no backend should be made");
    };
    for (const seam of ["policy", "random", "tracer"]) {
      expect(() => run(main, { backend, [seam]: {} } as never)).toThrow(
        `run(main, { ${seam} }): a seam of the kernel, not a program's option: runtimes pass it to runOnBackend of @bobbin/unix/backend`,
      );
    }
    expect(() => runOnBackend(main, { backend, events: () => ({}) } as never)).toThrow(
      /runOnBackend\(main, \{ events \}\): .*makes the events backend itself/,
    );
    expect(made).toBe(0);
  });

  it("takes the seams left undefined, as before", async () => {
    expect(await run(main, { events: undefined, policy: undefined, random: undefined, tracer: undefined } as never)).toBe(1);
  });

  it("names the unknown option, not a seam left undefined ahead of it", () => {
    expect(() => run(main, { events: undefined, domain: 2 } as never)).toThrow(
      `run(main, options): unknown option "domain"; the options are backend, ${L.runOptionNames.join(", ")}`,
    );
  });
});
