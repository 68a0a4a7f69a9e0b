/**
 * The simulated world: one clock, one generator, one network, its hosts,
 * and the backend that serves them all — inside one kernel. The world's
 * root task runs a supervisor per host (each host's `main` is a subtree of
 * the world's task tree) and ends the run once the clients are done, or at
 * the first failure.
 *
 * A world also serves `@bobbin/unix`'s `run` directly (`simulated()`): then
 * it has one host and every task of the run belongs to it.
 */
import { EventEmitter } from "node:events";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import type { Choices } from "./choices.js";
import { Clock } from "./clock.js";
import { SimDeadlock, SimTimeLimit } from "./errors.js";
import { type Controlled, install, realSetImmediate, uninstall } from "./globals.js";
import type { Host, HostEvents } from "./host.js";
import { Network } from "./network.js";
import type { Measure } from "./size.js";
import { TraceRecorder } from "./trace.js";

/** The wall-clock time a simulation starts at: 2000-01-01T00:00:00Z, whatever the seed. */
const EPOCH = Date.UTC(2000, 0, 1);

/** @internal What the world needs of the backend that serves it (see backend.ts). */
export interface WorldBackend extends L.Events {
  /** Makes `select` report `s`. */
  signal(s: L.Syscall): void;
  /** Whether `select` waits for something from outside the world. */
  readonly isWaiting: boolean;
  /** Parks the calling task for `ms` of the world's clock. */
  sleep(ms: number): B.Operation<void>;
}

/** @internal Something that waits for every task of the world to wait (a name lookup, see lookup.ts). */
export interface Deferred {
  /** The world has nothing else to do: it happens now. */
  answer(): void;
}

/** @internal How a world is made. */
export interface WorldOptions {
  /** Where every choice of the world comes from. */
  readonly choices: Choices;
  /** Whether to keep a trace. */
  readonly trace: boolean;
  /** The longest the world may run, in virtual seconds. */
  readonly limit: number;
  /** How many simulated worker domains the world has. */
  readonly domains: number;
}

/**
 * @internal Hears what each step of the world touches (see explore.ts): a
 * host, or null for the whole world.
 */
export interface WorldObserver {
  touch(host: Host | null): void;
  /** A step touches the world's own state: what its root task reads (a host's end, the run's failure). */
  touchRoot(): void;
}

/** @internal */
export class World implements Controlled, HostEvents {
  readonly clock = new Clock();
  readonly choices: Choices;
  readonly network: Network;
  readonly trace: TraceRecorder | null;
  readonly epoch = EPOCH;
  readonly signals = new EventEmitter();
  firing = 0;
  /** The run's first failure. */
  failure: { readonly error: unknown } | null = null;
  /** Counts the run's steps, preemptions and faults, when it follows its choices. */
  measure: Measure | null = null;
  /** Hears what the steps touch, while `explore` runs the world. */
  observer: WorldObserver | null = null;
  /** Set once `backend` is made (the backend needs the world first). */
  backend!: WorldBackend;
  private readonly limitMs: number;
  private readonly domains: number;
  private readonly supervisors = new Map<B.Task<unknown>, Host>();
  /** The host of every task, in a world made for `@bobbin/unix`'s `run`. */
  private soleHost: Host | null = null;
  /** The root task's wait for news (a host ended, the run failed). */
  private news: L.Syscall | null = null;
  /** The world's root task, once it runs: abandoning the run names it. */
  private rootTask: B.Task<unknown> | null = null;
  /**
   * Set once the root stops the hosts: the errors the run ends with so far
   * (the world's failure, then what each host's cleanup threw), none lost if
   * a cleanup never ends and the run is abandoned.
   */
  private stopErrors: unknown[] | null = null;
  /** The host the root is stopping now (one at a time, in declaration order). */
  private stoppingHost: Host | null = null;
  /** Name lookups waiting for every task to wait (see lookup.ts). */
  private lookups: Deferred[] = [];
  /** Counts the world's waits for something from outside it, to tell one from the next. */
  private idleCount = 0;
  private installed = false;

  constructor(options: WorldOptions) {
    this.choices = options.choices;
    this.trace = options.trace
      ? new TraceRecorder(
          () => this.clock.now,
          (task) => this.hostOf(task)?.name ?? "world",
        )
      : null;
    this.network = new Network(this.clock, this.choices, this.trace, this);
    this.limitMs = options.limit * 1000;
    this.domains = options.domains;
  }

  // -- hosts -----------------------------------------------------------------------

  /** Makes `host` the host of every task (a world for `@bobbin/unix`'s `run`). */
  adoptAll(host: Host): void {
    this.soleHost = host;
    host.up = true;
  }

  /** The host `task` belongs to, or null for the world's own tasks. */
  hostOf(task: B.Task<unknown>): Host | null {
    for (let t: B.Task<unknown> | null = task; t !== null; t = t.parent) {
      const host = this.supervisors.get(t);
      if (host !== undefined) return host;
    }
    return this.soleHost;
  }

  /**
   * The host of the running task.
   * @throws TypeError when the task belongs to no host (the world's own tasks, a signal handler).
   */
  currentHost(what: string): Host {
    const task = B.self();
    const host = this.hostOf(task);
    if (host === null) {
      throw new TypeError(
        `${what} in a simulation needs a host, and ${task} belongs to none: sockets are made by the tasks of a host's main (sim.host, sim.client)`,
      );
    }
    return host;
  }

  started(host: Host): void {
    this.trace?.record(host.name, host.incarnation === 1 ? "up" : `up again (incarnation ${host.incarnation})`);
  }

  ended(host: Host, result: B.Result<unknown>): void {
    this.trace?.record(host.name, result.ok ? "main returned" : `main failed: ${String(result.error)}`);
    if (!result.ok) this.fail(this.domains === 0 ? explained(result.error) : result.error);
    else this.tellRoot();
  }

  // -- the run -------------------------------------------------------------------------

  /** The world's root task: starts every host, waits until the clients are done (or a failure), then stops them all. */
  *root(): Generator<B.Instruction, unknown[], unknown> {
    this.rootTask = B.self();
    const hosts = this.network.hosts;
    for (const host of hosts) {
      const supervisor = B.spawn({ name: host.name }, supervise, host, this);
      host.supervisor = supervisor;
      this.supervisors.set(supervisor, host);
    }
    const clients = hosts.filter((h) => h.client);
    const awaited = clients.length !== 0 ? clients : hosts;
    while (this.failure === null && !awaited.every((h) => h.outcome.ended)) {
      const news = L.syscall("world");
      this.news = news;
      yield* L.suspend(news);
    }
    // Every host is stopped, and no error replaces another: the world's failure
    // first, then what hosts threw as they were cancelled (their cleanup's).
    const errors = this.failure !== null ? [this.failure.error] : [];
    this.stopErrors = errors;
    for (const host of hosts) {
      this.stoppingHost = host;
      try {
        yield* B.cancel(host.supervisor!);
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length !== 0) throw errors.length === 1 ? errors[0] : new B.Failures(errors);
    return clients.map((h) => (h.outcome as { result: { value: unknown } }).result.value);
  }

  /** The run fails with `error` (the first failure wins); the root stops the hosts. */
  fail(error: unknown): void {
    this.observer?.touchRoot();
    if (this.failure === null) {
      this.failure = { error };
      this.measure?.fail(this.choices.log);
    }
    this.tellRoot();
  }

  /** A fault happens now (a partition, a crash, a loss…): the shrinker wants fewer, and later. */
  fault(): void {
    this.measure?.fault(this.clock.now);
  }

  /** A step touches `host` (null: the whole world), for `explore`'s reduction. */
  touch(host: Host | null): void {
    this.observer?.touch(host);
  }

  /** A tracer that tells the observer the host of every task a step spawns, wakes, cancels or ends. */
  touchTracer(): L.Tracer {
    const touch = (task: B.Task<unknown>): void => this.touchTask(task);
    return { spawn: touch, resume: touch, cancel: touch, end: touch };
  }

  /**
   * A step touches `task`: its host; for a task of no host, the world's
   * root (its own state) — any other (a signal handler) may touch anything.
   */
  touchTask(task: B.Task<unknown>): void {
    const host = this.hostOf(task);
    if (host === null && task.parent === null) this.observer?.touchRoot();
    else this.touch(host);
  }

  /**
   * A callback the world ran (a virtual timer's) threw: in a simulation the
   * run fails; in a world made for `@bobbin/unix`'s `run`, the error is
   * uncaught, as a real timer's would be.
   */
  callbackFailed(error: unknown): void {
    if (this.soleHost === null) this.fail(error);
    else
      queueMicrotask(() => {
        throw error;
      });
  }

  private tellRoot(): void {
    this.observer?.touchRoot();
    const news = this.news;
    if (news === null) return;
    this.news = null;
    this.backend.signal(news);
  }

  // -- time --------------------------------------------------------------------------

  /** Fires the events due now (a packet sent on the loopback, a deadline of this instant); returns whether any fired. */
  fireDue(): boolean {
    if (this.clock.next > this.clock.now) return false;
    this.firing++;
    try {
      return this.clock.fireDue() !== 0;
    } finally {
      this.firing--;
    }
  }

  /** Answers `lookup` once every task waits. */
  defer(lookup: Deferred): void {
    this.lookups.push(lookup);
  }

  /** Forgets a lookup nobody waits for any more. */
  undefer(lookup: Deferred): void {
    const i = this.lookups.indexOf(lookup);
    if (i >= 0) this.lookups.splice(i, 1);
  }

  /** Whether name lookups wait for every task to wait. */
  get lookupsPending(): boolean {
    return this.lookups.length !== 0;
  }

  /** Whether the root stops the hosts (the clients are done, or the run failed). */
  get stopping(): boolean {
    return this.stopErrors !== null;
  }

  /** Whether the root task waits on its syscall (so the scheduler polls the backend while the world runs). */
  get rootWaits(): boolean {
    return this.news !== null;
  }

  /** Every task waits: answers the pending name lookups, at this instant. Returns whether there were any. */
  answerLookups(): boolean {
    if (this.lookups.length === 0) return false;
    const lookups = this.lookups;
    this.lookups = [];
    for (const lookup of lookups) lookup.answer();
    return true;
  }

  /**
   * Every task waits: moves the clock to the next event and fires that
   * instant's events. Returns false when nothing is to come. Past the time
   * limit, the run fails instead (its hosts are stopped at that instant);
   * a host's cleanup that would run past the limit is abandoned.
   */
  advance(): boolean {
    const next = this.clock.next;
    if (next === Infinity) return false;
    if (next > this.limitMs && this.stopping) {
      // The hosts' cleanup would run past the limit: nothing of the world does.
      this.clock.now = this.limitMs;
      this.abandon(new SimTimeLimit(this.limitMs / 1000, this.stoppingHost!.name));
      return true;
    }
    if (next > this.limitMs && this.failure === null) {
      this.clock.now = this.limitMs;
      this.fail(new SimTimeLimit(this.limitMs / 1000));
      return true;
    }
    this.firing++;
    try {
      this.clock.advance(Infinity);
    } finally {
      this.firing--;
    }
    return true;
  }

  /** The backend waits anew for something to happen: an idle check made before is stale. */
  busy(): void {
    this.idleCount++;
  }

  /**
   * Nothing in the world is to come, and every task waits. Only something
   * outside the world can wake a task now (a real Promise settling in
   * microtasks does, before Node's next turn); if nothing did by then, the
   * world is deadlocked and the run fails.
   */
  idle(): void {
    if (this.soleHost !== null) return; // a world for unix's run: core's own deadlock detection applies
    const count = ++this.idleCount;
    realSetImmediate(() => {
      if (count !== this.idleCount || !this.backend.isWaiting) return;
      const hosts = this.network.hosts.map((h) => `${h.name} (${h.up ? "up" : "down"})`).join(", ");
      // While the hosts are stopped, cancelling is done: nothing can end the tasks still waiting.
      if (this.stopping) this.abandon(new SimDeadlock(this.clock.now / 1000, hosts, this.stoppingHost!.name));
      else {
        this.fail(new SimDeadlock(this.clock.now / 1000, hosts));
        this.backend.interrupt();
      }
    });
  }

  /**
   * A host being stopped never will be (cancelled already, its cleanup
   * waits on what nothing will do, or would outlive the limit): the run
   * settles now with the errors it has and `error`, and leaves the tasks
   * still there (its own, and those of the hosts not stopped yet) where
   * they wait.
   */
  private abandon(error: SimDeadlock | SimTimeLimit): void {
    const errors = [...this.stopErrors!, error];
    L.abandon(this.rootTask!, errors.length === 1 ? error : new B.Failures(errors));
  }

  // -- the globals -------------------------------------------------------------------

  /** Patches the globals for this world (see globals.ts). */
  install(): void {
    install(this);
    this.installed = true;
  }

  /** Restores the globals, if this world patched them. */
  uninstall(): void {
    if (!this.installed) return;
    this.installed = false;
    uninstall(this);
  }

  /** The backend drained the world (the end of `@bobbin/unix`'s `run`). */
  drained(): void {
    this.clock.clear();
    if (this.soleHost !== null) this.uninstall();
  }
}

/**
 * A failure as the simulation's user should read it: in a world made with
 * `domains: 0`, core's advice for a `call` without worker domains ("run with
 * { domains: n }") is the Sim's option.
 */
function explained(error: unknown): unknown {
  if (!(error instanceof B.NoDomainAvailable)) return error;
  const clear = new B.NoDomainAvailable(
    "no domain is available for a parallel task (B.call, B.parallel): this simulation has 0 worker domains; " +
      "make it with new Sim({ domains: n }) (n ≥ 1; they are simulated on the world's thread)",
  );
  Object.defineProperty(clear, "cause", { value: error, configurable: true, writable: true });
  return clear;
}

function* supervise(host: Host, events: HostEvents): Generator<B.Instruction, never, unknown> {
  return yield* host.supervise(events);
}
