/**
 * The sources of nondeterminism a JavaScript program reaches without asking
 * the runtime — clocks, `Math.random`, timers, the real network, OS
 * signals — made deterministic inside a simulation, or reported.
 *
 * While a simulation runs, the globals are patched: code of the world (its
 * tasks, and the callbacks the world runs) sees the virtual clock, the
 * world's generator, virtual timers and simulated signals, and gets a
 * `Nondeterminism` error from `node:net`/`node:dgram`; every other caller
 * (the test runner, another run on the same thread) gets the real thing.
 * The patches are removed when the simulation ends, however it ends.
 */
import dgram from "node:dgram";
import type { EventEmitter } from "node:events";
import net from "node:net";
import * as L from "@bobbin/core/lowlevel";
import { CallbackEvent, type Clock } from "./clock.js";
import { Nondeterminism } from "./errors.js";

/** @internal What the patches need of the running world. */
export interface Controlled {
  /** The world's events backend: a kernel with it runs the world. */
  readonly backend: object;
  readonly clock: Clock;
  /** Where the world's random numbers come from. */
  readonly choices: { float(): number; byte(): number };
  /** The wall-clock time (ms since 1970) the simulation starts at. */
  readonly epoch: number;
  /** How many world callbacks are running (virtual timers, deadlines): they are world code too. */
  firing: number;
  /** The process signals of the world, raised by `sim.signal`. */
  readonly signals: EventEmitter;
  /** A virtual timer's callback threw: the simulation fails with it. */
  callbackFailed(error: unknown): void;
}

const RealDate = Date;
const real = {
  dateNow: Date.now,
  performanceNow: performance.now,
  hrtime: process.hrtime,
  random: Math.random,
  setTimeout: globalThis.setTimeout,
  setInterval: globalThis.setInterval,
  setImmediate: globalThis.setImmediate,
  clearTimeout: globalThis.clearTimeout,
  clearInterval: globalThis.clearInterval,
  clearImmediate: globalThis.clearImmediate,
  netConnect: net.Socket.prototype.connect,
  netListen: net.Server.prototype.listen,
  dgramBind: dgram.Socket.prototype.bind,
  dgramSend: dgram.Socket.prototype.send,
  on: process.on,
  addListener: process.addListener,
  once: process.once,
  prependListener: process.prependListener,
  off: process.off,
  removeListener: process.removeListener,
};

/** @internal The real `setImmediate`, for the world's own use while the globals are patched. */
export const realSetImmediate = real.setImmediate;
/** @internal The real `performance.now`, for measuring real time while the globals are patched. */
export const realNow = (): number => real.performanceNow.call(performance);

let world: Controlled | null = null;

/** Whether a task of the world runs now (or a callback it fires): clocks are virtual. */
function worldRuns(): boolean {
  return world !== null && (world.firing !== 0 || L.currentEvents() === world.backend);
}

/** Whether code of the world runs now: one of its tasks, or a callback it runs. Not the scheduler itself. */
function worldCode(): boolean {
  if (world === null) return false;
  if (world.firing !== 0) return true;
  return L.currentEvents() === world.backend;
}

function virtualNow(): number {
  return world!.clock.now;
}

// -- clocks ------------------------------------------------------------------------

function now(this: unknown): number {
  return worldRuns() ? world!.epoch + Math.floor(virtualNow()) : real.dateNow();
}

function performanceNow(this: unknown): number {
  return worldRuns() ? virtualNow() : real.performanceNow.call(performance);
}

function hrtime(time?: [number, number]): [number, number] {
  if (!worldRuns()) return real.hrtime(time);
  const ns = Math.round(virtualNow() * 1e6);
  let seconds = Math.floor(ns / 1e9);
  let nanos = ns - seconds * 1e9;
  if (time !== undefined) {
    seconds -= time[0];
    nanos -= time[1];
    if (nanos < 0) {
      seconds--;
      nanos += 1e9;
    }
  }
  return [seconds, nanos];
}
hrtime.bigint = (): bigint => (worldRuns() ? BigInt(Math.round(virtualNow() * 1e6)) : real.hrtime.bigint());

/** `Date` as the world sees it: `new Date()` and `Date()` say the virtual time; everything else is the real `Date`. */
const SimDate = new Proxy(RealDate, {
  construct(target, args, newTarget) {
    return args.length === 0 && worldRuns() ? Reflect.construct(target, [now()], newTarget) : Reflect.construct(target, args, newTarget);
  },
  apply(target) {
    return worldRuns() ? new target(now()).toString() : target();
  },
  get(target, key, receiver) {
    return key === "now" ? now : Reflect.get(target, key, receiver);
  },
});

// -- randomness --------------------------------------------------------------------

function random(): number {
  return worldCode() ? world!.choices.float() : real.random();
}

const webCrypto = globalThis.crypto;
const realGetRandomValues = webCrypto.getRandomValues;
const realRandomUUID = webCrypto.randomUUID;

function getRandomValues<T extends ArrayBufferView | null>(array: T): T {
  if (!worldCode() || array === null) return realGetRandomValues.call(webCrypto, array as never) as unknown as T;
  const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  for (let i = 0; i < bytes.length; i++) bytes[i] = world!.choices.byte();
  return array;
}

function randomUUID(): `${string}-${string}-${string}-${string}-${string}` {
  if (!worldCode()) return realRandomUUID.call(webCrypto);
  const b = getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// -- timers ------------------------------------------------------------------------

/** A timer of the world: an event of its agenda, shaped like Node's `Timeout`. */
class VirtualTimer {
  private readonly event: CallbackEvent;

  constructor(
    private readonly owner: Controlled,
    callback: (...args: unknown[]) => void,
    args: unknown[],
    private readonly delay: number,
    private readonly repeat: boolean,
  ) {
    this.event = new CallbackEvent(() => {
      if (this.repeat) this.refresh();
      owner.firing++;
      try {
        callback.apply(this, args);
      } catch (error) {
        owner.callbackFailed(error);
      } finally {
        owner.firing--;
      }
    });
    this.refresh();
  }

  refresh(): this {
    this.owner.clock.schedule(this.event, this.owner.clock.now + this.delay);
    return this;
  }

  close(): this {
    this.owner.clock.cancel(this.event);
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  hasRef(): boolean {
    return true;
  }
}

/** Node's rule: a delay that is not a number from 1 to 2^31 − 1 ms is 1 ms. */
function delayOf(ms: unknown): number {
  const n = Number(ms);
  return n >= 1 && n <= 2 ** 31 - 1 ? n : 1;
}

function timer(repeat: boolean, callback: unknown, delay: number, args: unknown[]): VirtualTimer {
  if (typeof callback !== "function") throw new TypeError(`The "callback" argument must be of type function. Received ${typeof callback}`);
  return new VirtualTimer(world!, callback as (...a: unknown[]) => void, args, delay, repeat);
}

function setTimeoutPatched(callback: unknown, ms?: unknown, ...args: unknown[]): unknown {
  return worldCode() ? timer(false, callback, delayOf(ms), args) : Reflect.apply(real.setTimeout, globalThis, [callback, ms, ...args]);
}

function setIntervalPatched(callback: unknown, ms?: unknown, ...args: unknown[]): unknown {
  return worldCode() ? timer(true, callback, delayOf(ms), args) : Reflect.apply(real.setInterval, globalThis, [callback, ms, ...args]);
}

/** An immediate of the world runs at its next turn, without time passing. */
function setImmediatePatched(callback: unknown, ...args: unknown[]): unknown {
  return worldCode() ? timer(false, callback, 0, args) : Reflect.apply(real.setImmediate, globalThis, [callback, ...args]);
}

function clear(realClear: (handle: never) => void): (handle: unknown) => void {
  return (handle) => {
    if (handle instanceof VirtualTimer) handle.close();
    else realClear(handle as never);
  };
}

// -- the real network ------------------------------------------------------------------

function refuse<F extends (this: never, ...args: never[]) => unknown>(realFn: F, source: string, advice: string): F {
  return function (this: never, ...args: never[]) {
    if (worldCode()) throw new Nondeterminism(source, advice);
    return realFn.apply(this, args);
  } as F;
}

const NET_ADVICE = "use @bobbin/unix's sockets (tcpv4, connect, bindAndListen…), which the simulated network serves";

// -- signals -----------------------------------------------------------------------------

function isSignal(event: unknown): boolean {
  return typeof event === "string" && event.startsWith("SIG");
}

function listen(realFn: (...args: never[]) => unknown, method: "on" | "once" | "prependListener" | "off"): (...args: never[]) => unknown {
  return function (this: NodeJS.Process, event: unknown, listener: unknown) {
    if (!isSignal(event) || !worldCode()) return realFn.call(this, event as never, listener as never);
    world!.signals[method](event as string, listener as (...a: unknown[]) => void);
    return this;
  } as (...args: never[]) => unknown;
}

// -- installing ----------------------------------------------------------------------------

/** Where each patch goes, and what it puts there. */
const PATCHES: readonly [object, string, unknown][] = [
  [globalThis, "Date", SimDate],
  [performance, "now", performanceNow],
  [process, "hrtime", hrtime],
  [Math, "random", random],
  [webCrypto, "getRandomValues", getRandomValues],
  [webCrypto, "randomUUID", randomUUID],
  [globalThis, "setTimeout", setTimeoutPatched],
  [globalThis, "setInterval", setIntervalPatched],
  [globalThis, "setImmediate", setImmediatePatched],
  [globalThis, "clearTimeout", clear(real.clearTimeout)],
  [globalThis, "clearInterval", clear(real.clearInterval)],
  [globalThis, "clearImmediate", clear(real.clearImmediate)],
  [net.Socket.prototype, "connect", refuse(real.netConnect, "net.Socket.connect", NET_ADVICE)],
  [net.Server.prototype, "listen", refuse(real.netListen, "net.Server.listen", NET_ADVICE)],
  [dgram.Socket.prototype, "bind", refuse(real.dgramBind, "dgram.Socket.bind", NET_ADVICE)],
  [dgram.Socket.prototype, "send", refuse(real.dgramSend, "dgram.Socket.send", NET_ADVICE)],
  [process, "on", listen(real.on, "on")],
  [process, "addListener", listen(real.addListener, "on")],
  [process, "once", listen(real.once, "once")],
  [process, "prependListener", listen(real.prependListener, "prependListener")],
  [process, "off", listen(real.off, "off")],
  [process, "removeListener", listen(real.removeListener, "off")],
];

/** What each patched property was before `install`: its own descriptor, or undefined when it was inherited. */
let saved: (PropertyDescriptor | undefined)[] = [];

/**
 * @internal Patches the globals for `owner`, until `uninstall`.
 * @throws TypeError when another simulation runs on this thread.
 */
export function install(owner: Controlled): void {
  if (world !== null) {
    throw new TypeError("another simulation is running on this thread: run simulations one after another (await each sim.run())");
  }
  world = owner;
  saved = PATCHES.map(([target, key]) => Object.getOwnPropertyDescriptor(target, key));
  for (const [target, key, value] of PATCHES) Object.defineProperty(target, key, { value, configurable: true, writable: true });
}

/** @internal Restores every global `install` patched (does nothing when `owner` is not the one installed). */
export function uninstall(owner: Controlled): void {
  if (world !== owner) return;
  world = null;
  PATCHES.forEach(([target, key], i) => {
    const before = saved[i];
    if (before === undefined) delete (target as Record<string, unknown>)[key];
    else Object.defineProperty(target, key, before);
  });
  saved = [];
}
