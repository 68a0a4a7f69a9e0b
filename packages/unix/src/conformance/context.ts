/**
 * What every group of the conformance suite is given: the backend under
 * test, what it can do, and the ways to run a program on it.
 */
import type * as B from "@bobbin/core";
import { type Backend, run } from "@bobbin/unix";
import { expect } from "vitest";
import { activeHandles, leaked } from "./support.js";

/**
 * Options of `conformance`: what the backend under test can do, so that the
 * suite runs every test that applies to it and skips the others.
 *
 * @example
 * ```ts
 * const options: ConformanceOptions = {
 *   childProcess: { module: new URL("../dist/index.js", import.meta.url).href, export: "myBackend" },
 * };
 * ```
 * @throws never (a type; `conformance` checks it).
 */
export interface ConformanceOptions {
  /**
   * For the tests that drive the backend in a process of their own (an
   * echo server under a low `ulimit -n`): the module that exports the
   * backend factory, as an absolute URL (a bare specifier is resolved from
   * `@bobbin/unix`), the name of that export, and options for `node`
   * (e.g. `["--import", "tsx"]` when the module is TypeScript). The child
   * process is a plain Node process: the module must be runnable by it,
   * and import `@bobbin/unix` as the same package the suite's child script
   * does. Without it those tests are skipped.
   */
  readonly childProcess?: {
    readonly module: string;
    readonly export: string;
    readonly execArgv?: readonly string[];
  };
  /**
   * Whether the backend's sockets are the system's own, on loopback, so that
   * plain Node sockets can be their peers: a listener that never accepts,
   * a client that resets, a server that hangs up, the soak test's clients.
   * Default `true`; a backend with a network of its own (a simulation) says
   * `false`, and the tests that need a Node peer are skipped.
   */
  readonly systemSockets?: boolean;
  /**
   * Whether the backend's clock is the system's, with Node timers behind its
   * sleepers (`"system"`, the default), or a virtual clock that jumps to the
   * next deadline whenever every task waits and holds no Node timer
   * (`"virtual"`, a simulation): the check that a sleeper holds a Node timer
   * is then skipped (every other timing check holds in virtual time).
   */
  readonly clock?: "system" | "virtual";
  /**
   * The soak test's size: `connections` in all (default 1,000), at most
   * `concurrency` at once (default 50), messages of 1 to `maxSize` bytes
   * (default 256 KiB), planned from `seed` (default: a random one, named in
   * the failures' messages so that a run can be replayed).
   */
  readonly soak?: {
    readonly connections?: number;
    readonly concurrency?: number;
    readonly maxSize?: number;
    readonly seed?: number;
  };
}

/** A program run by the suite: a task body. */
export type Body<T> = () => Generator<B.Instruction, T, unknown>;

/** @internal What each group of tests is given. */
export interface Suite {
  readonly backend: (domain: number) => Backend;
  readonly options: ConformanceOptions;
  /** Whether plain Node sockets can be peers of the backend's (see `systemSockets`). */
  readonly systemSockets: boolean;
  /** Whether the backend's sleepers hold Node timers (see `clock`). */
  readonly systemClock: boolean;
  /** Runs `main` with the backend under test. */
  inRun<T>(main: Body<T>): Promise<T>;
  /** Runs `main` and checks that the process has no more active handles afterwards than before. */
  leakFree<T>(main: Body<T>): Promise<T>;
  /** A temporary directory for Unix sockets, made before the tests and removed after them. */
  dir(): string;
}

/** @internal */
export function makeSuite(backend: (domain: number) => Backend, options: ConformanceOptions, dir: () => string): Suite {
  const inRun = <T>(main: Body<T>): Promise<T> => run(main, { backend });
  return {
    backend,
    options,
    systemSockets: options.systemSockets ?? true,
    systemClock: options.clock !== "virtual",
    inRun,
    async leakFree<T>(main: Body<T>): Promise<T> {
      const before = activeHandles();
      const value = await inRun(main);
      expect(leaked(before, activeHandles()), "no handle (socket, timer) of the run is left in the process").toEqual({});
      return value;
    },
    dir,
  };
}
