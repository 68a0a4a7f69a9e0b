import { describe, expect, it } from "vitest";
import * as B from "../dist-dev/index.js";
import type { Call } from "../src/domains/wire.js";
import { SharingBoard, SharingPolicy } from "../src/domains/work-sharing.js";
import * as F from "./fixtures/parallel-tasks.mjs";

const calls = (n: number, from = 0, pinned = false): Call[] =>
  Array.from({ length: n }, (_, i) => ({ id: i, from, url: "file:///t.js", name: "t", args: [], pinned, contexts: false, slots: null }));

describe("the sharing policy", () => {
  it("shares one call, then doubles each time the idle domain comes back, from the oldest", () => {
    const policy = new SharingPolicy(true);
    const queue = calls(10);
    expect(policy.share(queue, 2, 0).map((c) => c.id)).toEqual([0]);
    expect(policy.share(queue, 2, 0).map((c) => c.id)).toEqual([1, 2]);
    expect(policy.share(queue, 2, 0).map((c) => c.id)).toEqual([3, 4, 5, 6]);
    expect(queue.map((c) => c.id)).toEqual([7, 8, 9]);
  });

  it("starts from one again once the queue ran dry", () => {
    const policy = new SharingPolicy(true);
    const queue = calls(3);
    policy.share(queue, 2, 0);
    policy.share(queue, 2, 0);
    expect(queue).toHaveLength(0);
    const more = calls(4);
    expect(policy.share(more, 2, 0)).toHaveLength(1);
  });

  it("never shares pinned calls, calls back to their caller, or the call an idle domain keeps", () => {
    const policy = new SharingPolicy(true);
    const queue = [...calls(1, 0), ...calls(2, 0, true), ...calls(2, 3)];
    expect(policy.share(queue, 3, 1)).toEqual([]);
    expect(queue).toHaveLength(5);
    expect(new SharingPolicy(false).share(calls(5), 2, 0)).toEqual([]);
  });
});

describe("work sharing between domains", () => {
  // Round-robin puts every heavy input on domain 1 and every light one on domain 2.
  const skewed = [200, 1, 200, 1, 200, 1, 200, 1];
  const heavyPlaces = (workSharing: boolean) =>
    B.run(
      function* () {
        const results = yield* B.parallel(F.spin, skewed);
        return new Set(results.filter((_, i) => skewed[i] === 200).map((r) => (r.ok ? r.value : -1)));
      },
      { domains: 2, workSharing },
    );

  it("an idle domain takes queued work from a busy one", async () => {
    expect([...(await heavyPlaces(true))].sort()).toEqual([1, 2]);
  });

  it("without sharing, the busy domain does all its work alone", async () => {
    expect([...(await heavyPlaces(false))]).toEqual([1]);
  });
});

describe("the sharing board", () => {
  it("lets one domain claim another's idle flag once, and finds the busiest domain", () => {
    const board = new SharingBoard(SharingBoard.create(3), 4);
    board.setIdle(2, true);
    board.setIdle(3, true);
    expect(board.idleDomains(1)).toEqual([2, 3]);
    expect(board.claimIdle(2)).toBe(true);
    expect(board.claimIdle(2)).toBe(false);
    expect(board.idleDomains(1)).toEqual([3]);
    expect(board.busiest(1)).toBe(-1);
    board.setQueued(2, 4);
    board.setQueued(3, 7);
    expect(board.busiest(1)).toBe(3);
    expect(board.busiest(3)).toBe(2);
  });
});
