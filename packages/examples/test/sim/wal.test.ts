import { CheckFailed, check, replay } from "@bobbin/sim";
import { describe, expect, it } from "vitest";
import { LostWrite, record, recover, walWorld } from "../../src/sim/wal.js";

describe("a write-ahead log on a simulated disk, under crashes", () => {
  it("keeps every acknowledged put when each record is synced before the answer", async () => {
    await expect(check(walWorld(), { runs: 100, seed: 1 })).resolves.toEqual({ runs: 100, seed: 1 });
  });

  it("without the sync (the planted bug), check finds a lost write, shrinks it, and replay repeats it", async () => {
    const buggy = walWorld({ fsync: false });
    const failed = (await check(buggy, { runs: 100, seed: 1 }).catch((e: unknown) => e)) as CheckFailed;
    expect(failed).toBeInstanceOf(CheckFailed);
    expect(failed.cause).toBeInstanceOf(LostWrite);
    const [was, is] = [failed.originalSize!, failed.size!];
    expect(is.steps).toBeLessThan(was.steps);
    expect(is.faults).toBeLessThan(was.faults);
    expect(is.faults).toBeGreaterThanOrEqual(2); // a crash, and what it lost
    for (const line of [failed.repro, failed.original]) {
      const again = await replay(buggy, line).catch((e: unknown) => e);
      expect(again).toBeInstanceOf(LostWrite);
    }
    expect(((await replay(buggy, failed.repro).catch((e: unknown) => e)) as Error).message).toBe((failed.cause as Error).message);
    console.log(`wal without fsync, shrunk: ${failed.original} (${JSON.stringify(was)}) → ${failed.repro} (${JSON.stringify(is)})`);
  });

  it("recovery keeps whole records and skips a torn one", () => {
    const log = record("a", "1") + record("b", "2") + record("c", "3").slice(0, 5);
    expect(recover(log)).toEqual({
      entries: new Map([
        ["a", "1"],
        ["b", "2"],
      ]),
      torn: true,
    });
    const mended = `${log}\n${record("d", "4")}`;
    expect(recover(mended)).toEqual({
      entries: new Map([
        ["a", "1"],
        ["b", "2"],
        ["d", "4"],
      ]),
      torn: false,
    });
    const corrupt = record("a", "1").replace("a=1", "a=9");
    expect(recover(corrupt).entries.size).toBe(0);
  });
});
