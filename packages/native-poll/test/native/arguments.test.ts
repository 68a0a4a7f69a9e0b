// Every integer argument of every addon entry point is an integer in its
// range, or the call throws (TypeError for a wrong type, RangeError for NaN,
// a fraction, an infinity or a value out of range) before any system call:
// nothing is rounded or wrapped, so NaN never becomes fd 0.
import { fstatSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { loadAddon } from "../../src/load.js";
import { uringAddon } from "../../src/uring/native.js";
import { socketpair } from "../helpers.js";

const native = loadAddon();
const INT32_MAX = 2 ** 31 - 1;
const [a, b] = socketpair();
afterAll(() => {
  native.syscalls.close(a);
  native.syscalls.close(b);
});

/** An entry point: good arguments, and for each integer argument its position, name and range. */
interface Row {
  readonly call: (...args: unknown[]) => unknown;
  readonly args: readonly unknown[];
  readonly ints: readonly (readonly [position: number, name: string, min: number, max: number])[];
}

const FD = (position: number) => [position, "fd", 0, INT32_MAX] as const;
const OFF_LEN = (at: number) => [[at, "offset", 0, INT32_MAX] as const, [at + 1, "length", -1, INT32_MAX] as const];
const buf = Buffer.alloc(8);
const sys = native.syscalls as unknown as Record<string, (...args: unknown[]) => unknown>;

const syscallRows: Record<string, Omit<Row, "call">> = {
  socket: {
    args: [4, 1],
    ints: [
      [0, "family", 0, INT32_MAX],
      [1, "type", 0, INT32_MAX],
    ],
  },
  bind: { args: [a, "127.0.0.1", 0], ints: [FD(0), [2, "port", -1, 65535]] },
  listen: { args: [a, 1], ints: [FD(0), [1, "backlog", 0, INT32_MAX]] },
  accept: { args: [a], ints: [FD(0)] },
  connect: { args: [a, "127.0.0.1", 1], ints: [FD(0), [2, "port", -1, 65535]] },
  socketError: { args: [a], ints: [FD(0)] },
  read: { args: [a, buf, 0, 1], ints: [FD(0), ...OFF_LEN(2)] },
  write: { args: [a, buf, 0, 1], ints: [FD(0), ...OFF_LEN(2)] },
  readv: { args: [a, [buf]], ints: [FD(0)] },
  writev: { args: [a, [buf]], ints: [FD(0)] },
  recvfrom: { args: [a, buf, 0, 1], ints: [FD(0), ...OFF_LEN(2)] },
  sendto: { args: [a, buf, 0, 1, "127.0.0.1", 1], ints: [FD(0), ...OFF_LEN(2), [5, "port", -1, 65535]] },
  shutdown: { args: [a, 1], ints: [FD(0), [1, "how", 0, 2]] },
  close: { args: [a], ints: [FD(0)] },
  dup: { args: [a], ints: [FD(0)] },
  setsockopt: {
    args: [a, 1, 2, 1],
    ints: [FD(0), [1, "level", 0, INT32_MAX], [2, "name", 0, INT32_MAX], [3, "value", -INT32_MAX - 1, INT32_MAX]],
  },
  getsockopt: { args: [a, 1, 2], ints: [FD(0), [1, "level", 0, INT32_MAX], [2, "name", 0, INT32_MAX]] },
  getsockname: { args: [a, {}], ints: [FD(0)] },
  getpeername: { args: [a, {}], ints: [FD(0)] },
  socketpair: { args: [1], ints: [[0, "type", 0, INT32_MAX]] },
  pipe: { args: [], ints: [] },
};

const C = native.constants;
const poller = new native.NativePoller(1, () => {});
poller.unref();
afterAll(() => poller.destroy());
const p = poller as unknown as Record<string, (...args: unknown[]) => unknown>;
const pollerRows: Record<string, Omit<Row, "call">> = {
  add: { args: [a, C.READABLE, C.EDGE], ints: [FD(0), [1, "interest", 1, 3], [2, "mode", 0, 2]] },
  modify: { args: [a, C.READABLE], ints: [FD(0), [1, "interest", 1, 3]] },
  rearm: { args: [a], ints: [FD(0)] },
  disarm: { args: [a], ints: [FD(0)] },
  remove: { args: [a], ints: [FD(0)] },
  close: { args: [a], ints: [FD(0)] },
  generation: { args: [a], ints: [FD(0)] },
  poll: { args: [0], ints: [[0, "timeoutMs", -1, INT32_MAX]] },
  readAhead: { args: [16], ints: [[0, "areaBytes", 0, 2 ** 30]] },
  wants: { args: [16], ints: [[0, "length", 0, 2 ** 26]] },
  sendQueue: {
    args: [16, 1],
    ints: [
      [0, "stagingBytes", 0, 2 ** 30],
      [1, "entries", 0, 1_000_000],
    ],
  },
};

const pool = new native.NativeArenaPool(64, 1, 0);
afterAll(() => pool.close());
const ap = pool as unknown as Record<string, (...args: unknown[]) => unknown>;
const poolRows: Record<string, Omit<Row, "call">> = {
  release: { args: [0], ints: [[0, "id", 0, INT32_MAX]] },
  check: { args: [0], ints: [[0, "id", 0, INT32_MAX]] },
  arenaBuffer: { args: [0], ints: [[0, "index", 0, INT32_MAX]] },
};

/** Values that are not integers in [min, max], with the error each must throw. */
function badValues(min: number, max: number): [unknown, ErrorConstructor][] {
  return [
    [Number.NaN, RangeError],
    [min + 0.5, RangeError],
    [Number.POSITIVE_INFINITY, RangeError],
    [Number.NEGATIVE_INFINITY, RangeError],
    [min - 1, RangeError],
    [max + 1, RangeError],
    [String(min), TypeError],
    [undefined, TypeError],
  ];
}

function expectChecked(name: string, row: Row): void {
  for (const [position, argName, min, max] of row.ints) {
    for (const [value, kind] of badValues(min, max)) {
      const args = [...row.args];
      args[position] = value;
      let error: unknown;
      try {
        row.call(...args);
      } catch (e) {
        error = e;
      }
      expect(error, `${name}: argument ${position + 1} (${argName}) = ${String(value)}`).toBeInstanceOf(kind);
      expect((error as Error).message).toContain(`(${argName})`);
    }
  }
}

describe("the addon's integer arguments", () => {
  it("every system call checks each integer argument: an integer in its range, or TypeError/RangeError", () => {
    // The table covers every entry point the addon exports.
    expect(Object.keys(syscallRows).sort()).toEqual(Object.keys(native.syscalls).sort());
    for (const [name, row] of Object.entries(syscallRows)) expectChecked(`syscalls.${name}`, { ...row, call: sys[name]! });
  });

  it("so does every poller method that takes an integer, and the poller's constructor", () => {
    expectChecked("NativePoller", {
      call: (...args) => new native.NativePoller(...(args as [number, () => void])),
      args: [1, () => {}],
      ints: [[0, "batchEvents", 1, 1_000_000]],
    });
    for (const [name, row] of Object.entries(pollerRows)) {
      expectChecked(`poller.${name}`, { ...row, call: (...args) => p[name]!.apply(poller, args) });
    }
    // The registration table is untouched by the refused calls.
    expect(poller.registered).toBe(0);
  });

  it("and every arena pool method, and the pool's constructor", () => {
    for (const [name, row] of Object.entries(poolRows)) {
      expectChecked(`pool.${name}`, { ...row, call: (...args) => ap[name]!.apply(pool, args) });
    }
    expectChecked("NativeArenaPool", {
      call: (...args) => new native.NativeArenaPool(...(args as [number, number, number])),
      args: [64, 1, 0],
      ints: [
        [0, "slotSize", 1, 2 ** 26],
        [1, "maxArenas", 0, 2 ** 25],
        [2, "memory", 0, 2],
      ],
    });
  });

  it.skipIf(typeof uringAddon() === "string")("and every field of the io_uring ring's configuration", () => {
    const U = uringAddon() as Exclude<ReturnType<typeof uringAddon>, string>;
    const good = { entries: 8, buffers: 4, bufferSize: 64, staging: 1, stagingSize: 64, taskRun: 0 };
    const fields: [keyof typeof good, number, number][] = [
      ["entries", 1, 32768],
      ["buffers", 1, 32768],
      ["bufferSize", 1, 2 ** 24],
      ["staging", 1, 2 ** 16],
      ["stagingSize", 1, 2 ** 24],
      ["taskRun", 0, 3],
    ];
    for (const [field, min, max] of fields) {
      for (const [value, kind] of badValues(min, max).filter(([v]) => v !== undefined)) {
        expect(() => new U.NativeUring(() => {}, { ...good, [field]: value }), `${field} = ${String(value)}`).toThrow(kind);
      }
    }
  });

  it("close(NaN) closes nothing: fd 0 stays open", () => {
    expect(() => native.syscalls.close(Number.NaN)).toThrow(RangeError);
    expect(() => native.syscalls.close(0.5)).toThrow(RangeError);
    expect(fstatSync(0)).toBeTruthy();
  });
});
