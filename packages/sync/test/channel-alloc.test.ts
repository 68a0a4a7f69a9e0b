import * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { Channel } from "../src/index.js";
import { YoungAllocation } from "./alloc.js";

const N = 100_000;
const WINDOWS = 3;

describe("Channel: the fast paths allocate nothing", () => {
  it("a send with room and a receive with a value waiting, 100,000 times: 0 bytes", async () => {
    const ch = new Channel<number>(1);
    const perPair = await B.run(function* () {
      const bytes: number[] = [];
      let wrong = 0;
      for (let w = 0; w < WINDOWS; w++) {
        const window = new YoungAllocation();
        for (let i = 0; i < N; i++) {
          yield* ch.send(i);
          if ((yield* ch.recv()) !== i) wrong++;
        }
        bytes.push(window.stop() / N);
      }
      expect(wrong).toBe(0);
      return bytes;
    });
    expect(Math.max(...perPair)).toBeLessThan(0.5);
  });
});

/**
 * What one select over two channels must allocate, made by hand: the array of
 * its cases (the program's), its operation (`B.select`: the cases), the state
 * of one decision (its choice: cases, whether it stands alone, state, winner,
 * outcome, whether it failed, task, kernel, registrations) and its result
 * (`{ index, value }`).
 */
class SelectOp {
  constructor(readonly cases: unknown) {}
}
class Decision {
  state = 0;
  winner = -1;
  outcome: unknown = undefined;
  failed = false;
  task: unknown = null;
  kernel: unknown = null;
  registrations: unknown = null;
  constructor(
    readonly cases: unknown,
    readonly lone: boolean,
  ) {}
}
const sink: unknown[] = [null, null, null];

/**
 * `WINDOWS` measurements of N rounds of `yield* a.send(i)` and then either a
 * select over `[b.recv(), a.recv()]` that receives `i`, or (`byHand`)
 * `a.tryRecv()` and the objects a select must allocate, made by hand.
 */
function* selects(a: Channel<number>, b: Channel<number>, byHand: boolean): Generator<B.Instruction, number[], unknown> {
  const bytes: number[] = [];
  const fromB = b.recv();
  const fromA = a.recv();
  let wrong = 0;
  for (let w = 0; w < WINDOWS; w++) {
    const window = new YoungAllocation();
    for (let i = 0; i < N; i++) {
      yield* a.send(i);
      if (byHand) {
        const cases = [fromB, fromA];
        sink[0] = new SelectOp(cases);
        sink[1] = new Decision(cases, false);
        sink[2] = { index: 1, value: a.tryRecv() };
        continue;
      }
      const r = yield* B.select([b.recv(), a.recv()]);
      if (r.index !== 1 || r.value !== i) wrong++;
    }
    bytes.push(window.stop() / N);
  }
  expect(wrong).toBe(0);
  return bytes;
}

describe("Channel in select: what a select allocates", () => {
  it("a select over two channels with a value waiting allocates its array, operation, choice and result, and nothing else", async () => {
    const a = new Channel<number>(1);
    const b = new Channel<number>(1);
    const [made, must] = await B.run(function* () {
      return [yield* selects(a, b, false), yield* selects(a, b, true)];
    });
    expect(Math.min(...made!)).toBeLessThanOrEqual(Math.min(...must!) + 1);
  });
});
