/**
 * `Sim`: a simulated world to declare (hosts, clients, links), run once,
 * break (partitions, holds, resets, crashes) and read back (its trace).
 */
import type * as B from "@bobbin/core";
import { checkOptionNames, maxDomains } from "@bobbin/core/lowlevel";
import { runOnBackend } from "@bobbin/unix/backend";
import { isLiteral } from "./address.js";
import { SimBackend } from "./backend.js";
import { type ChoiceLog, type Choices, Drawn, Followed } from "./choices.js";
import { Disk, type DiskOptions } from "./disk.js";
import { describeError } from "./errors.js";
import { Host, type HostMain } from "./host.js";
import { checkLinkOptions, type LinkOptions } from "./link.js";
import { POLICY_NAMES, type PolicyName } from "./policy.js";
import { WorldRandom } from "./random.js";
import { formatRepro, type Repro } from "./repro.js";
import { Measure } from "./size.js";
import { bothTracers, Trace } from "./trace.js";
import { World } from "./world.js";

/** How long a simulation may run by default: one virtual day. */
const DEFAULT_LIMIT = 86_400;
/** How many simulated worker domains a world has by default: fixed, so that a seed replays on any machine. */
const DEFAULT_DOMAINS = 2;
/** PCT's first guess at how many scheduling steps a run takes (`check` learns it from the runs). */
export const DEFAULT_STEPS = 100;
const DEFAULT_DEPTH = 3;

/**
 * Options of `new Sim(options)`: what decides a run, so that the same
 * options (and the same `build`) make the same run.
 *
 * @example
 * ```ts
 * const sim = new Sim({ seed: 42, policy: "random", trace: true });
 * ```
 */
export interface SimOptions {
  /** Seeds every random choice of the world. Default: a random seed (see `sim.repro`). */
  readonly seed?: number | undefined;
  /** Which ready task runs next: `"fifo"` (default), `"random"` or `"pct"`. */
  readonly policy?: PolicyName | undefined;
  /** PCT's bug depth (≥ 1; default 3): how many ordering constraints a bug may need. */
  readonly depth?: number | undefined;
  /** PCT's horizon: the change points fall among the first `steps` scheduling choices (default 100). */
  readonly steps?: number | undefined;
  /** Keep a trace of the run (`sim.trace()`). Default false. */
  readonly trace?: boolean | undefined;
  /** The longest the world may run, in virtual seconds (default one day); past it the run fails with `SimTimeLimit`. */
  readonly limit?: number | undefined;
  /**
   * How many worker domains `B.call`/`B.parallel` may use, simulated on the
   * world's thread, 0 to 1024 as for core's `run` (default 2, whatever the machine:
   * see "Parallel tasks" in the README).
   */
  readonly domains?: number | undefined;
}

/** Every option of {@link SimOptions}. */
const OPTION_NAMES: readonly (keyof SimOptions)[] = ["seed", "policy", "depth", "steps", "trace", "limit", "domains"];

/**
 * @internal The key of the option that gives a world its choices (`check`,
 * `replay`, the shrinker, `explore`); no option a user writes has it.
 */
export const CHOICES = Symbol("choices");

/** @internal The key of the option that keeps the choices a seeded world draws (`check`, to shrink a failure). */
export const KEEP = Symbol("keep");

/** @internal Options with the choices of the world. */
export type ChoosingOptions = SimOptions & { readonly [CHOICES]?: Choices; readonly [KEEP]?: ChoiceLog };

/**
 * Declares a world: hosts, clients, links (called once per run, with a fresh
 * `Sim`). It may be async.
 *
 * @example
 * ```ts
 * const build: Build = (sim) => {
 *   sim.host("server", server);
 *   sim.client("client", client);
 * };
 * ```
 */
export type Build = (sim: Sim) => void | Promise<void>;

/**
 * A simulated world: hosts running `@bobbin/unix` programs unchanged, one
 * thread, virtual time, a network with faults, and a schedule drawn from one
 * seed. Declare hosts and clients, then `await sim.run()`: it resolves with
 * the clients' results, or rejects with the first failure — whose `repro`
 * replays the run exactly.
 *
 * @example
 * ```ts
 * const sim = new Sim({ seed: 1 });
 * sim.host("server", function* () {
 *   const s = tcpv4();
 *   yield* bindAndListen(s, { host: "0.0.0.0", port: 7 });
 *   for (;;) { const [c] = yield* accept(s); … }
 * });
 * sim.client("client", function* () {
 *   const c = tcpv4();
 *   yield* connect(c, { host: "server", port: 7 });
 *   …
 *   return "done";
 * });
 * const [result] = await sim.run();
 * ```
 * @throws TypeError / RangeError for invalid options.
 */
export class Sim {
  /** The seed of the world (a world `replay` makes from a `schedule=` line draws nothing from it). */
  readonly seed: number;
  /** The schedule's policy (a world that follows a `schedule=` line takes its schedule from it). */
  readonly policy: PolicyName;
  private readonly world: World;
  /** The backend serving the world's hosts. */
  private readonly backend: SimBackend;
  /** The hosts' disks, made by `disk(name)`: they outlive crashes. */
  private readonly disks = new Map<Host, Disk>();
  private readonly depth: number;
  private readonly steps: number;
  private readonly limit: number;
  private readonly domains: number;
  private readonly choices: Choices;
  private state: "declaring" | "running" | "over" = "declaring";

  constructor(options: SimOptions = {}) {
    if (options === null || typeof options !== "object") throw new TypeError("new Sim(options) expects an options object");
    checkOptionNames("new Sim(options)", options, OPTION_NAMES);
    const { seed = Math.floor(Math.random() * 2 ** 32), policy = "fifo", depth = DEFAULT_DEPTH, steps = DEFAULT_STEPS } = options;
    const { trace = false, limit = DEFAULT_LIMIT, domains = DEFAULT_DOMAINS } = options;
    if (!Number.isSafeInteger(seed)) throw new RangeError(`new Sim({ seed }): the seed must be a safe integer, got ${String(seed)}`);
    if (!POLICY_NAMES.includes(policy)) {
      throw new TypeError(
        `new Sim({ policy }): the policy must be one of ${POLICY_NAMES.map((p) => `"${p}"`).join(", ")}, got ${String(policy)}`,
      );
    }
    checkCount(depth, "depth");
    checkCount(steps, "steps");
    if (typeof trace !== "boolean") throw new TypeError(`new Sim({ trace }) expects true or false, got ${String(trace)}`);
    if (typeof limit !== "number" || !(limit > 0))
      throw new RangeError(`new Sim({ limit }): the limit must be a number of virtual seconds > 0, got ${String(limit)}`);
    // Refused here, not when the world runs (core's run refuses the same).
    if (!Number.isInteger(domains) || domains < 0 || domains > maxDomains)
      throw new RangeError(`new Sim({ domains }) must be an integer from 0 to ${maxDomains}, got ${String(domains)}`);
    this.seed = seed;
    this.policy = policy;
    this.depth = depth;
    this.steps = steps;
    this.limit = limit;
    this.domains = domains;
    const internal = options as ChoosingOptions;
    const choices = internal[CHOICES] ?? new Drawn(new WorldRandom(seed), policy, depth, steps, internal[KEEP] ?? null);
    this.choices = choices;
    const world = new World({ choices, trace, limit, domains });
    this.world = world;
    this.backend = new SimBackend(world);
    world.backend = this.backend;
    if (choices instanceof Followed) {
      const measure = new Measure((task) => world.hostOf(task));
      world.measure = measure;
      choices.listener ??= measure;
      choices.misfit = (what) =>
        world.fail(
          new TypeError(`replay(build, repro): the schedule does not fit this world: its ${what}; was the line made with this build?`),
        );
    }
  }

  /**
   * The line that makes this run again: `replay(build, sim.repro)`.
   *
   * @example
   * ```ts
   * console.log(sim.repro);   // "seed=42 policy=pct depth=3 steps=100"
   * ```
   */
  get repro(): string {
    const options = {
      ...(this.limit !== DEFAULT_LIMIT ? { limit: this.limit } : {}),
      ...(this.domains !== DEFAULT_DOMAINS ? { domains: this.domains } : {}),
    };
    const log = this.choices.log;
    if (this.choices instanceof Followed && log !== null) return formatRepro({ schedule: log, ...options });
    const repro: Repro = {
      seed: this.seed,
      policy: this.policy,
      ...(this.policy === "pct" ? { depth: this.depth, steps: this.steps } : {}),
      ...options,
    };
    return formatRepro(repro);
  }

  // -- declaring -------------------------------------------------------------------

  /**
   * Adds a host named `name` running `main` (a generator function using
   * `@bobbin/unix` as any program does). Its addresses are 10.0.0.n and
   * fd00::n (n counts hosts in declaration order); its name resolves to them.
   * A host's `main` returning ends nothing; its failure fails the run.
   *
   * @example
   * ```ts
   * sim.host("server", function* () { … });
   * ```
   * @throws TypeError for a name that is taken, empty or an IP address, a
   * `main` that is not a function, or once the run started.
   */
  host(name: string, main: HostMain): this {
    this.declare(name, main, false, "host");
    return this;
  }

  /**
   * Adds a client: a host whose `main`'s result is part of the run's result.
   * The run ends once every client's `main` has returned.
   *
   * @example
   * ```ts
   * sim.client("client", function* () { return yield* fetchSomething(); });
   * const [value] = await sim.run();
   * ```
   * @throws TypeError as {@link Sim.host}.
   */
  client<T>(name: string, main: HostMain<T>): this {
    this.declare(name, main, true, "client");
    return this;
  }

  private declare(name: string, main: HostMain, client: boolean, what: string): void {
    if (this.state !== "declaring") throw new TypeError(`sim.${what}(): declare every host before sim.run()`);
    if (typeof name !== "string" || name.length === 0 || name === "localhost" || name === "world" || isLiteral(name) || /\s/.test(name)) {
      throw new TypeError(
        `sim.${what}(name, main): the name must be a non-empty string without spaces, not an IP address, "localhost" or "world"; got ${JSON.stringify(name)}`,
      );
    }
    if (this.world.network.host(name) !== undefined) throw new TypeError(`sim.${what}(): a host is already named ${JSON.stringify(name)}`);
    if (typeof main !== "function")
      throw new TypeError(`sim.${what}(name, main) expects main to be a generator function (function* () { … })`);
    this.world.network.add(new Host(name, this.world.network.hosts.length + 1, main, client));
  }

  /**
   * Sets the options of every link (latency, UDP loss and reordering); links
   * set with {@link Sim.link} keep what they set themselves only until this
   * sets it again.
   *
   * @example
   * ```ts
   * sim.network({ latency: { min: 0.001, max: 0.02 }, loss: 0.01 });
   * ```
   * @throws TypeError / RangeError for invalid options.
   */
  network(options: LinkOptions): this {
    this.world.network.configureAll(checkLinkOptions(options, "sim.network(options)"));
    return this;
  }

  /**
   * Sets the options of the links between `a` and `b` (both directions).
   *
   * @example
   * ```ts
   * sim.link("client", "server", { latency: 0.05, loss: 0.2 });
   * ```
   * @throws TypeError for an unknown host or invalid options; RangeError for invalid values.
   */
  link(a: string, b: string, options: LinkOptions): this {
    const [x, y] = this.pair(a, b, "link");
    checkLinkOptions(options, "sim.link(a, b, options)");
    this.world.network.link(x, y).configure(options);
    this.world.network.link(y, x).configure(options);
    return this;
  }

  /**
   * The disk of host `name`, made at the first call (with `options`): files
   * its tasks read and write with the shape of a system's file operations,
   * that outlive the host's crashes as far as they were synced (see the
   * README's "Disks"). Callable while declaring and from any task.
   *
   * @example
   * ```ts
   * const disk = sim.disk("db");
   * sim.host("db", function* () {
   *   const f = yield* disk.open("data", "a");
   *   yield* f.write("x");
   *   yield* f.sync();
   * });
   * ```
   * @throws TypeError for an unknown host, or options for a disk already made; RangeError for a bad latency.
   */
  disk(name: string, options?: DiskOptions): Disk {
    const host = this.find(name, "disk");
    const made = this.disks.get(host);
    if (made !== undefined) {
      if (options !== undefined)
        throw new TypeError(
          `sim.disk(${JSON.stringify(name)}, options): the disk of ${name} is made already; give its options at the first call`,
        );
      return made;
    }
    if (options !== undefined && (options === null || typeof options !== "object"))
      throw new TypeError("sim.disk(name, options) expects options { sync }");
    if (options?.sync !== undefined) checkLinkOptions({ latency: options.sync }, "sim.disk(name, { sync })");
    const disk = new Disk(this.world, host, options ?? {});
    this.disks.set(host, disk);
    return disk;
  }

  // -- breaking ----------------------------------------------------------------------

  /**
   * Cuts the links between `a` and `b`: UDP datagrams are lost, new
   * connections cannot be made (their SYNs are lost and retried), and TCP
   * segments wait for the repair (TCP loses nothing). Callable before the run
   * and from any task of the world.
   *
   * @example
   * ```ts
   * sim.partition("server", "client");
   * yield* sleep(5);
   * sim.repair("server", "client");
   * ```
   * @throws TypeError for an unknown host.
   */
  partition(a: string, b: string): void {
    this.linkFault("partition", a, b);
  }

  /**
   * Heals a partition between `a` and `b`; the TCP segments that waited go on, in order.
   *
   * @example
   * ```ts
   * sim.repair("server", "client");
   * ```
   * @throws TypeError for an unknown host.
   */
  repair(a: string, b: string): void {
    this.linkFault("repair", a, b);
  }

  /**
   * Holds every packet between `a` and `b` (TCP and UDP) until `release`:
   * nothing is lost, everything is late.
   *
   * @example
   * ```ts
   * sim.hold("a", "b");
   * ```
   * @throws TypeError for an unknown host.
   */
  hold(a: string, b: string): void {
    this.linkFault("hold", a, b);
  }

  /**
   * Delivers the packets held between `a` and `b`, in the order they were sent.
   *
   * @example
   * ```ts
   * sim.release("a", "b");
   * ```
   * @throws TypeError for an unknown host.
   */
  release(a: string, b: string): void {
    this.linkFault("release", a, b);
  }

  /** Applies a fault of the links between two hosts, and traces it. */
  private linkFault(fault: "partition" | "repair" | "hold" | "release", a: string, b: string): void {
    const [x, y] = this.pair(a, b, fault);
    this.world.trace?.record("world", `${fault} ${a} ${b}`);
    if (fault === "partition" || fault === "hold") this.world.fault();
    this.touch(x, y);
    this.world.network[fault](x, y);
  }

  /** The step calling a fault reaches these hosts. */
  private touch(...hosts: Host[]): void {
    for (const host of hosts) this.world.touch(host);
  }

  /**
   * Resets every TCP connection between `a` and `b`: both ends fail with
   * `ECONNRESET` (reads) or `EPIPE` (writes) from now on.
   *
   * @example
   * ```ts
   * sim.reset("client", "server");
   * ```
   * @throws TypeError for an unknown host, or before the run.
   */
  reset(a: string, b: string): void {
    const [x, y] = this.pair(a, b, "reset");
    this.running("reset");
    this.world.trace?.record("world", `reset ${a} ${b}`);
    this.world.fault();
    this.touch(x, y);
    for (const sock of [...this.backend.sockets.on(x).open]) {
      const end = sock.endpoint;
      const peer = end?.peer;
      if (end == null || peer == null || peer.socket.host !== y) continue;
      end.reset();
      peer.reset();
    }
  }

  /**
   * Crashes a host: its sockets are closed at once (their peers get an RST
   * when it reaches them), its ports are freed, every task of its `main` is
   * cancelled, and packets that reach it while it is down are lost. It stays
   * down until {@link Sim.restart}.
   *
   * @example
   * ```ts
   * sim.crash("server");
   * yield* sleep(1);
   * sim.restart("server");
   * ```
   * @throws TypeError for an unknown host, or outside the run.
   */
  crash(name: string): void {
    const host = this.find(name, "crash");
    this.running("crash");
    this.touch(host);
    if (!host.up) return;
    this.world.trace?.record(name, "crash");
    this.world.fault();
    this.backend.crashed(host);
    host.requestCrash();
    this.disks.get(host)?.crash();
  }

  /**
   * Runs a host's `main` again from the start (a host still up crashes first).
   *
   * @example
   * ```ts
   * sim.restart("server");
   * ```
   * @throws TypeError for an unknown host, or outside the run.
   */
  restart(name: string): void {
    const host = this.find(name, "restart");
    this.running("restart");
    this.crash(name);
    this.world.trace?.record(name, "restart");
    host.requestRestart();
  }

  /**
   * Raises an OS signal in the world: the handlers set with `onSignal` by its
   * hosts run (one handler per signal for the whole world, as in one run of
   * `@bobbin/unix`). Real OS signals never reach the world.
   *
   * @example
   * ```ts
   * sim.signal("SIGINT");
   * ```
   * @throws TypeError for a name that is not a signal's, or outside the run.
   */
  signal(name: NodeJS.Signals): void {
    if (typeof name !== "string" || !name.startsWith("SIG"))
      throw new TypeError(`sim.signal(name) expects a signal name such as "SIGINT", got ${String(name)}`);
    this.running("signal");
    this.world.trace?.record("world", `signal ${name}`);
    this.world.touch(null);
    this.world.signals.emit(name, name);
  }

  // -- reading -------------------------------------------------------------------------

  /**
   * The virtual time, in seconds since the world started.
   *
   * @example
   * ```ts
   * yield* sleep(3600);
   * sim.now();   // 3600, at once
   * ```
   */
  now(): number {
    return this.world.clock.now / 1000;
  }

  /**
   * The address of a host (IPv4 by default).
   *
   * @example
   * ```ts
   * sim.lookup("server");      // "10.0.0.1"
   * sim.lookup("server", 6);   // "fd00::1"
   * ```
   * @throws TypeError for an unknown host.
   */
  lookup(name: string, family: 4 | 6 = 4): string {
    return this.find(name, "lookup").address(family === 6 ? 6 : 4);
  }

  /**
   * The trace of the run so far (needs `new Sim({ trace: true })`): the same
   * seed gives the same trace, byte for byte, in any process.
   *
   * @example
   * ```ts
   * console.log(String(sim.trace()));
   * ```
   * @throws TypeError when the simulation keeps no trace.
   */
  trace(): Trace {
    const recorder = this.world.trace;
    if (recorder === null) throw new TypeError("sim.trace(): this simulation keeps no trace; make it with new Sim({ trace: true })");
    return new Trace(recorder.lines.slice(), recorder.entries.slice());
  }

  /** @internal The most scheduling steps PCT counted, for `check` to fit the next runs' change points. */
  get stepsTaken(): number {
    return this.choices instanceof Drawn ? (this.choices.pct?.maxStep ?? 0) : 0;
  }

  /** @internal The world, for `check`, `replay` and `explore` to read how the run went. */
  get simulated(): World {
    return this.world;
  }

  // -- running -------------------------------------------------------------------------

  /**
   * Runs the world until every client's `main` has returned (or, without
   * clients, every host's), then cancels the hosts still running. Resolves
   * with the clients' results in declaration order. A simulation runs once.
   *
   * While it runs, the world's code sees virtual time (`Date`,
   * `performance.now`, timers), the world's generator (`Math.random`,
   * `crypto.getRandomValues`), and fails with `Nondeterminism` if it reaches
   * the real network; the globals are restored however the run ends.
   *
   * @example
   * ```ts
   * const [a, b] = await sim.run();
   * ```
   * @throws (rejects with) the first failure of the world — a host's error,
   * `SimDeadlock`, `SimTimeLimit`, core's `StillHasChildren`… — with
   * `repro`, the line that replays it; when hosts threw as they were stopped
   * (their cleanup's errors), core's `Failures` of them all, the first failure first.
   * A host whose cleanup never ends once the world stops it (it waits on what
   * nothing will do, or past the limit) adds `SimDeadlock` or `SimTimeLimit`
   * naming it (`stopping`): the run settles, its tasks abandoned.
   * @throws TypeError when it already ran, or another simulation runs on this thread.
   */
  async run(): Promise<unknown[]> {
    if (this.state !== "declaring")
      throw new TypeError("sim.run(): a simulation runs once; make a new Sim (with the same seed to run it again)");
    const simulated = this.world;
    simulated.install();
    this.state = "running";
    try {
      // A method keeps its name through bundlers: the root task is `world#1` in every trace.
      const root = {
        *world(): Generator<B.Instruction, unknown[], unknown> {
          return yield* simulated.root();
        },
      };
      const policy = this.choices.policy;
      const tracer = bothTracers(simulated.trace, simulated.observer !== null ? simulated.touchTracer() : null);
      return await runOnBackend(root.world, {
        backend: () => this.backend,
        random: this.choices.ties,
        ...(policy !== undefined ? { policy } : {}),
        ...(tracer !== null ? { tracer } : {}),
        domains: this.domains,
        simulateDomains: true,
      });
    } catch (error) {
      throw withRepro(error, this.repro);
    } finally {
      this.state = "over";
      simulated.uninstall();
    }
  }

  private running(what: string): void {
    if (this.state !== "running") throw new TypeError(`sim.${what}() acts on a running world: call it from a task of the simulation`);
  }

  private find(name: string, what: string): Host {
    const host = this.world.network.host(name);
    if (host === undefined) {
      const names = this.world.network.hosts.map((h) => h.name).join(", ") || "none yet";
      throw new TypeError(`sim.${what}(): no host is named ${JSON.stringify(name)} (the hosts: ${names})`);
    }
    return host;
  }

  private pair(a: string, b: string, what: string): [Host, Host] {
    const x = this.find(a, what);
    const y = this.find(b, what);
    if (x === y) throw new TypeError(`sim.${what}(a, b) acts between two hosts; got ${JSON.stringify(a)} twice`);
    return [x, y];
  }
}

function checkCount(value: unknown, name: string): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new RangeError(`new Sim({ ${name} }) must be an integer ≥ 1, got ${String(value)}`);
  }
}

/** @internal The run's error, carrying `repro` (wrapped when it cannot carry it: a primitive, a frozen object). */
export function withRepro(error: unknown, repro: string): unknown {
  if (error !== null && typeof error === "object" && Object.isExtensible(error)) {
    (error as { repro?: string }).repro = repro;
    return error;
  }
  return Object.assign(new Error(`the simulation failed with ${describeError(error)}`, { cause: error }), { repro });
}
