import * as B from "@bobbin/core";
import { describe, expect, it, vi } from "vitest";
import * as R from "../../src/ch05/retrospective.js";
import { runProgram } from "../support/processes.js";

describe("chapter 5: the retrospective's programs", () => {
  it("forgetting a child fails the run with StillHasChildren", async () => {
    await expect(R.forgottenChild()).rejects.toBeInstanceOf(B.StillHasChildren);
  });

  it("orphans collect background tasks, cleaned up as they end", async () => {
    const cleaned = await R.backgroundJobs(20);
    expect(cleaned).toBeGreaterThan(0);
    expect(cleaned).toBeLessThanOrEqual(20);
  });

  it("awaiting a sibling is NotAChild", async () => {
    await expect(R.awaitSibling()).rejects.toBeInstanceOf(B.NotAChild);
  });

  it("a child cancelled before it ran never runs, and is Cancelled", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    try {
      const r = await R.cancelChild();
      expect(r.ok).toBe(false);
      expect(r.ok ? null : r.error).toBeInstanceOf(B.Cancelled);
      expect(log).not.toHaveBeenCalled();
    } finally {
      log.mockRestore();
    }
  });

  it("cancelling a sibling is NotAChild", async () => {
    await expect(R.cancelSibling()).rejects.toBeInstanceOf(B.NotAChild);
  });

  it("cancellation overrides a result already awaited", async () => {
    const [before, after] = await R.cancelAfterCompletion();
    expect(before).toEqual({ ok: true, value: 2 });
    expect(after.ok).toBe(false);
    expect(after.ok ? null : after.error).toBeInstanceOf(B.Cancelled);
  });

  it("cancelling a task cancels its parallel subtree, and returns", async () => {
    const r = await R.cancelSubtree();
    expect(r.ok ? null : r.error).toBeInstanceOf(B.Cancelled);
  });

  it("while p1 is being cancelled, p0 runs", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    try {
      expect(await R.cancellationLetsOthersRun()).toEqual(["Cancel p1", "Do p0", "p1 cancelled"]);
    } finally {
      log.mockRestore();
    }
  });

  it("a parallel task runs on a worker domain", async () => {
    expect(await R.parallelTask()).toBeGreaterThanOrEqual(1);
  });

  it("a callee runs on another domain than its caller (5 runs)", async () => {
    for (let i = 0; i < 5; i++) {
      const [u, v] = await R.callFromCallee();
      expect(u).not.toBe(v);
      expect(u).not.toBe(0);
      expect(v).not.toBe(0);
    }
  });

  it("two calls in a row end up sharing a domain", async () => {
    expect(await R.sameDomainTwice()).toBeGreaterThanOrEqual(1);
  });

  it("parallel puts one task on each of three domains", async () => {
    expect(await R.parallelOverDomains()).toEqual([1, 2, 3]);
  });

  it("spawn plus parallel covers dom0 and the three workers", async () => {
    expect(await R.everyDomain()).toEqual([0, 1, 2, 3]);
  });

  it("node dist/ch05-retrospective.js", async () => {
    const r = await runProgram("ch05-retrospective.js");
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("→ Exception: StillHasChildren");
    expect(r.stdout).toContain("Cancel p1\nDo p0\np1 cancelled\n");
    expect(r.stdout).toContain("My parallel task.");
    expect(r.stdout).toContain("→ [1, 2, 3]");
    expect(r.stdout).toContain("→ [0, 1, 2, 3]");
  });
});
