/**
 * `run` (Miou_unix's `run`): core's `run` with an I/O backend, plus what a
 * program of `@bobbin/unix` needs around its main task, which stays the
 * root task: dom0's backend (and, for a factory defined with
 * `defineBackend`, one per worker domain), the run's context (signal
 * handlers), and a drain of the backend's handles before the returned
 * Promise settles.
 */
import type * as B from "@bobbin/core";
import { checkRunOptionNames, describe, kernelSeamNames, runKernel, runOptionNames } from "@bobbin/core/lowlevel";
import { registerBackend } from "./context.js";
import type { Backend } from "./contract.js";
import { checkBackend, startWith } from "./define.js";
import { libuv } from "./libuv/factory.js";
import { endRun, failureWith } from "./run-end.js";
import { shareSockets } from "./share.js";
import { type RunContext, registerContext, SignalTable, unregisterContext } from "./signals.js";

/** The kernel's seams that `runOnBackend` passes on and a program's `run` refuses: all but `events`, which the backend is. */
const PASSED_SEAMS: readonly string[] = kernelSeamNames.filter((seam) => seam !== "events");
/** `run`'s options. */
const OPTION_NAMES: readonly string[] = ["backend", ...runOptionNames];
/** `runOnBackend`'s options. */
const SEAM_OPTION_NAMES: readonly string[] = [...OPTION_NAMES, ...PASSED_SEAMS];

/**
 * Options of {@link run}: core's options, and `backend`.
 *
 * @example
 * ```ts
 * await run(main, { backend: libuv, seed: 42, sliceMs: 5 });
 * ```
 */
export interface RunOptions extends B.RunOptions {
  /**
   * Makes the I/O backend of each domain: called with 0 for dom0 when the run
   * starts and, when the factory was defined with `defineBackend`, in each
   * worker domain with its number. Default: {@link libuv}, Node's own libuv
   * (defined so: sockets, `sleep` and `withTimeout` work in parallel tasks).
   */
  readonly backend?: ((domain: number) => Backend) | undefined;
}

/**
 * Runs `main` with an I/O backend (by default the libuv backend) and
 * settles with its value or error once its whole task tree has ended and
 * every handle of the backend is closed: sockets left open are closed, so
 * nothing of the run outlives it.
 *
 * @example
 * ```ts
 * import { run, tcpv4, bindAndListen, accept, read, write, close } from "@bobbin/unix";
 *
 * await run(function* () {
 *   const server = tcpv4();
 *   yield* bindAndListen(server, { host: "127.0.0.1", port: 8080 });
 *   const [client] = yield* accept(server);
 *   const buf = Buffer.alloc(4096);
 *   for (let n; (n = yield* read(client, buf)) > 0; ) yield* write(client, buf, 0, n);
 *   yield* close(client);
 *   yield* close(server);
 * });
 * ```
 * @throws (rejects with) `main`'s error, a failing signal handler's error,
 * and what core's `run` rejects with (`StillHasChildren`, `ResourceLeaked`, `Deadlock`…);
 * `DrainTimeout` when the backend's `drain()` does not settle within the
 * run's `cancelGraceMs`, or what the end of the run threw (a drain's
 * rejection): alone when the run succeeded, after the run's own error in a
 * `Failures` when it failed.
 * @throws TypeError / RangeError for invalid options or a backend missing
 * methods of the contract (synchronously).
 */
export function run<T>(main: B.TaskBody<[], T>, options: RunOptions = {}): Promise<T> {
  return startRun("run", main, options, false);
}

/**
 * @internal `run`, and `runOnBackend` (`seams` true), which passes the
 * kernel's seams on; `name` is the caller's, for messages.
 */
export function startRun<T>(name: string, main: B.TaskBody<[], T>, options: RunOptions, seams: boolean): Promise<T> {
  if (typeof main !== "function") throw new TypeError(`${name}(main) expects a generator function, got ${describe(main)}`);
  if (options === null || typeof options !== "object")
    throw new TypeError(`${name}(main, options) expects an options object, got ${describe(options)}`);
  // Before a backend is made, naming this entry; runKernel then gets the kernel's options only, which it takes.
  checkRunOptionNames(`${name}(main, options)`, options, seams ? SEAM_OPTION_NAMES : OPTION_NAMES, (seam) => seamElsewhere(name, seam));
  const { backend: factory = libuv, ...kernel } = options;
  if (typeof factory !== "function")
    throw new TypeError(
      "run(main, { backend }) expects a backend factory, a function (domain) => Backend, passed uncalled: " +
        `libuv (the default), nativeBackend or uringBackend of @bobbin/native-poll, simulated() of @bobbin/sim; got ${describe(factory)}`,
    );
  const backend = factory(0);
  checkBackend(backend);
  registerBackend(backend);
  shareSockets();
  // `main` is the root task itself, as under core's run: the run's context
  // hangs on dom0's backend, and signal handlers run in a system task.
  const context: RunContext = { backend, signals: new SignalTable() };
  registerContext(context);
  let settled: Promise<T>;
  try {
    settled = startWith(factory, backend, (events) => runKernel(main, { ...kernel, events }));
  } catch (error) {
    unregisterContext(context);
    throw failureWith(dropBackend(backend), error);
  }
  // The run's end never rejects: its errors come after the run's own.
  const finish = (): Promise<unknown[]> => endRun(backend, context.signals, kernel.cancelGraceMs).finally(() => unregisterContext(context));
  return settled.then(
    async (value) => {
      const ending = await finish();
      if (ending.length !== 0) throw failureWith(ending);
      return value;
    },
    async (error: unknown) => {
      throw failureWith(await finish(), error);
    },
  );
}

/**
 * Where a seam of the kernel that `name` refuses goes: `events` nowhere (the
 * backend is the events backend), the others to `runOnBackend`. Its options
 * are checked here, before a backend is made, in messages naming this entry
 * and its options (`runKernel`'s would name the kernel's seams).
 */
function seamElsewhere(name: string, seam: string): string {
  return seam === "events"
    ? `${name}(main, { events }): @bobbin/unix's run makes the events backend itself: pass a Backend factory as { backend }`
    : `run(main, { ${seam} }): a seam of the kernel, not a program's option: runtimes pass it to runOnBackend of @bobbin/unix/backend`;
}

/**
 * A backend made for a run that did not start (a bad option): its drain has
 * nothing of a run to close. A drain that throws at once is returned, to go
 * with the run's error; one that rejects later has nobody left to tell (the
 * caller has had its error), and must not fail the process as an unhandled
 * rejection.
 */
function dropBackend(backend: Backend): unknown[] {
  try {
    backend.drain()?.catch(() => undefined);
    return [];
  } catch (error) {
    return [error];
  }
}
