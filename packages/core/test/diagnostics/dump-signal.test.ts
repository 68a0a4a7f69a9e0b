/**
 * The dump signal (`run({ dumpSignal })`, `BOBBIN_DUMP_SIGNAL`): a signal that
 * stops processes, or that no JavaScript can safely handle, is refused — a
 * listener would replace what it does (SIGTERM would print the tree instead
 * of ending the process).
 */
import { afterEach, describe, expect, it } from "vitest";
import { dumpSignalOf } from "../../src/diagnostics/dump-signal.js";
import * as B from "../../src/index.js";

const STOPPING = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGKILL", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGABRT"];
const FAULTS = ["SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL"];

const saved = process.env.BOBBIN_DUMP_SIGNAL;
afterEach(() => {
  if (saved === undefined) delete process.env.BOBBIN_DUMP_SIGNAL;
  else process.env.BOBBIN_DUMP_SIGNAL = saved;
});

describe("the dump signal", () => {
  it.each(STOPPING)("refuses %s, which stops processes: a RangeError that names the rule and the way out", (signal) => {
    expect(() => B.run(function* () {}, { dumpSignal: signal as NodeJS.Signals })).toThrow(RangeError);
    expect(() => B.run(function* () {}, { dumpSignal: signal as NodeJS.Signals })).toThrow(
      new RegExp(`^run\\({ dumpSignal }\\) must not be ${signal}: .*such as "SIGUSR2"`),
    );
  });

  it.each(FAULTS)("refuses %s, which reports a fault that no listener can safely handle", (signal) => {
    expect(() => B.run(function* () {}, { dumpSignal: signal as NodeJS.Signals })).toThrow(/reports a fault/);
  });

  it("refuses them from BOBBIN_DUMP_SIGNAL too, naming the variable", () => {
    process.env.BOBBIN_DUMP_SIGNAL = "SIGTERM";
    expect(() => dumpSignalOf(undefined)).toThrow(/^BOBBIN_DUMP_SIGNAL must not be SIGTERM: /);
    process.env.BOBBIN_DUMP_SIGNAL = "SIGINT";
    expect(() => B.run(function* () {})).toThrow(RangeError);
  });

  it("accepts the signals nobody else relies on, and names that are not signals stay refused", async () => {
    for (const signal of ["SIGUSR2", "SIGWINCH", "SIGPWR"]) expect(dumpSignalOf(signal)).toBe(signal);
    expect(
      await B.run(
        function* () {
          return 1;
        },
        { dumpSignal: "SIGUSR2" },
      ),
    ).toBe(1);
    for (const name of ["USR2", "toString", "__proto__", "constructor", 15]) {
      expect(() => dumpSignalOf(name)).toThrow(/must name a Unix signal Node can catch/);
    }
  });
});
