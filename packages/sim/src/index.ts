/**
 * @bobbin/sim — deterministic simulation testing for Bobbin: many hosts on
 * one thread, running `@bobbin/unix` programs unchanged; virtual time; a
 * simulated network with latency, loss, partitions, holds, resets and
 * crashes; seeded schedules (fifo, random, PCT); and `check`/`replay`, so
 * that any failure found is replayed exactly from one line.
 *
 * @example
 * ```ts
 * import { Sim } from "@bobbin/sim";
 * import { accept, bindAndListen, connect, read, tcpv4, write } from "@bobbin/unix";
 *
 * const sim = new Sim({ seed: 42 });
 * sim.host("server", function* () {
 *   const s = tcpv4();
 *   yield* bindAndListen(s, { host: "0.0.0.0", port: 7 });
 *   const [c] = yield* accept(s);
 *   const buf = Buffer.alloc(64);
 *   const n = yield* read(c, buf);
 *   yield* write(c, buf, 0, n);
 * });
 * sim.client("client", function* () {
 *   const c = tcpv4();
 *   yield* connect(c, { host: "server", port: 7 });
 *   yield* write(c, "ping");
 *   const buf = Buffer.alloc(4);
 *   yield* read(c, buf);
 *   return buf.toString();
 * });
 * const [reply] = await sim.run();   // "ping"
 * ```
 * @packageDocumentation
 */

export { type CheckOptions, type CheckReport, check, type ReplayOptions, replay } from "./check.js";
export { Disk, type DiskOptions, FileHandle, type OpenFlags } from "./disk.js";
export { CheckFailed, ExploreFailed, Nondeterminism, SimDeadlock, SimTimeLimit } from "./errors.js";
export { type ExploreOptions, type ExploreReport, explore } from "./explore.js";
export type { HostMain } from "./host.js";
export type { Latency, LinkOptions } from "./link.js";
export type { PolicyName } from "./policy.js";
export { type Build, Sim, type SimOptions } from "./sim.js";
export type { RunSize } from "./size.js";
export { type SimulatedOptions, simulated } from "./standalone.js";
export { Trace } from "./trace.js";
