import { readdirSync, readFileSync } from "node:fs";
import { sleep } from "@bobbin/unix";
import { describe, expect, it, vi } from "vitest";
import { type Build, CheckFailed } from "../src/index.js";
import { runSimTest, simTest } from "../src/vitest.js";

/** Two withdrawals of 80 from 100, checked then taken 50 ms apart: a race when both check first. */
const bank: Build = (sim) => {
  let balance = 100;
  for (const name of ["alice", "bob"]) {
    sim.client(name, function* () {
      yield* sleep(Math.random());
      if (balance >= 80) {
        yield* sleep(0.05);
        balance -= 80;
      }
      if (balance < 0) throw new Error(`overdrawn: ${balance}`);
    });
  }
};

const fine: Build = (sim) => {
  sim.client("c", function* () {
    yield* sleep(Math.random());
  });
};

describe("simTest", () => {
  simTest("is a test that passes when every run of check passes", fine, { runs: 20, seed: 1 });

  it("fails with CheckFailed when a run fails, and prints the line that replays it", async () => {
    const printed = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const error = await runSimTest("the bank", bank, { runs: 100, seed: 1 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckFailed);
      const line = `replay(build, ${JSON.stringify((error as CheckFailed).repro)})`;
      expect(printed).toHaveBeenCalledWith(
        expect.stringMatching(/^the bank: run \d+ of 100 failed: Error: overdrawn: -60\n {2}replay it with: /),
      );
      expect(printed.mock.calls[0]![0]).toContain(line);
    } finally {
      printed.mockRestore();
    }
  });

  it("lives in its own entry: nothing the main entry imports imports vitest", () => {
    const dir = new URL("../src/", import.meta.url);
    const importing = readdirSync(dir).filter((f) => f !== "vitest.ts" && /from "vitest"/.test(readFileSync(new URL(f, dir), "utf8")));
    expect(importing).toEqual([]);
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(pkg.exports["./vitest"].default).toBe("./dist/vitest.js");
    expect(pkg.peerDependenciesMeta.vitest.optional).toBe(true);
  });
});
