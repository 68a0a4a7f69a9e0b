// checkOptionNames: the one check of option names that every package's functions use.
import * as L from "@bobbin/core/lowlevel";
import { describe, expect, it } from "vitest";

describe("checkOptionNames", () => {
  const names = ["host", "port"];

  it("refuses the first unknown key, naming the function, the key and the options there are", () => {
    expect(() => L.checkOptionNames("listen(options)", { host: "::1", prot: 80, other: 1 }, names)).toThrow(
      new TypeError('listen(options): unknown option "prot"; the options are host, port'),
    );
  });

  it("refuses an unknown key whatever its value, undefined included", () => {
    expect(() => L.checkOptionNames("f(options)", { sed: undefined }, ["seed"])).toThrow(/unknown option "sed"/);
  });

  it("takes any subset of the names, and looks at own string keys only", () => {
    expect(() => L.checkOptionNames("f(options)", {}, names)).not.toThrow();
    expect(() => L.checkOptionNames("f(options)", { port: 0 }, names)).not.toThrow();
    expect(() => L.checkOptionNames("f(options)", Object.create({ inherited: 1 }), names)).not.toThrow();
    expect(() => L.checkOptionNames("f(options)", { [Symbol("tag")]: 1 }, names)).not.toThrow();
  });
});
