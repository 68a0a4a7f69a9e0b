/**
 * Task groups (Trio's nursery): a body that spawns tasks into a group, which
 * ends once all of them have ended; the first failure cancels the rest.
 *
 * The caller of `group` owns it: the body and every task spawned into the
 * group are its children (real tasks, with names, trace points and the tree's
 * rules), and it waits for them as a supervisor. The body runs as a task too,
 * so that a failure elsewhere in the group can cancel it like any other.
 */
import { describe, isGeneratorObject } from "./describe.js";
import { failureOf } from "./errors.js";
import { currentTask } from "./kernel/current.js";
import { type Kernel, kernelOf, runningKernel } from "./kernel/kernel.js";
import { RunQueue } from "./kernel/run-queue.js";
import { keepShapes } from "./kernel/shapes.js";
import { hasFailed, outcomeOf } from "./kernel/state.js";
import type { Task } from "./kernel/task.js";
import type { Instruction, Operation, TaskBody } from "./operation.js";
import { argsValue, checkSpawnOptions, makeChild } from "./spawn.js";
import type { SpawnOptions } from "./spawn-options.js";
import { Supervisor } from "./supervisor.js";

/**
 * Options of {@link group}, given first: `group({ limit }, body)`.
 *
 * @example
 * ```ts
 * yield* B.group({ limit: 4, name: "crawler" }, function* (g) {
 *   for (const url of urls) g.spawn(crawl, url);
 * });
 * ```
 */
export interface GroupOptions {
  /**
   * How many of the group's tasks may run at once (the body is not counted);
   * the others wait, in the order they were spawned, for one to end. An
   * integer ≥ 1, or `Infinity` (the default).
   */
  readonly limit?: number | undefined;
  /** The name of the body's task (default: the body function's name). */
  readonly name?: string | undefined;
  /** Resources to move to the body's task, as `spawn({ give })` does. */
  readonly give?: readonly unknown[] | undefined;
}

/**
 * Options of {@link Group.spawn}, given first: `g.spawn({ name, give }, fn, ...args)`.
 *
 * @example
 * ```ts
 * g.spawn({ name: `crawl ${url}` }, crawl, url);
 * ```
 */
export type GroupSpawnOptions = Omit<SpawnOptions, "orphans">;

/**
 * @internal Makes a group's next task (`makeTask`, as a child of `owner`), or
 * returns null when there is none left: what `forEach` and `map` hand their
 * group, so that an item becomes a task only once it may start (a task made
 * early would wait long enough to be promoted to the old generation).
 */
export type Feed = (owner: Task) => Task | null;

/** The supervisor of a group: its body, its tasks, and the tasks waiting for a place under the limit. */
class Crew extends Supervisor {
  body: Task | null = null;
  /** Tasks of the group that have started (or been adopted to be cancelled) and not ended; the body excluded. */
  running = 0;
  /** Tasks made but not started: the limit was reached. */
  readonly waiting = new RunQueue<Task>(16);
  /** Where tasks come from once `waiting` is empty, made only as places free up (see `Feed`); null once it has none left. */
  private feed: Feed | null = null;

  constructor(
    k: Kernel,
    owner: Task,
    private readonly limit: number,
  ) {
    super(k, owner);
  }

  startBody(options: GroupOptions, body: unknown, g: Group): void {
    const child = makeChild(this.k, this.owner, this.owner, bodySpawnOptions(options), body, 1, g, "group");
    this.body = child;
    this.add(child);
  }

  spawn(spawner: Task, options: GroupSpawnOptions | undefined, fn: unknown, args: unknown[]): Task {
    if (this.over) {
      throw new TypeError(
        `${spawner} cannot spawn into a group of ${this.owner} that has ended: spawn into a group only while its body or tasks run`,
      );
    }
    const child = makeChild(this.k, this.owner, spawner, options, fn, args.length, argsValue(args), "g.spawn");
    if (this.running >= this.limit && !this.stopping) this.waiting.push(child);
    else this.enter(child);
    return child;
  }

  /**
   * Starts the feed's tasks while there is room under the limit, then the
   * rest as places free up, after the tasks already waiting.
   */
  startFeed(feed: Feed): void {
    if (this.stopping) return;
    this.feed = feed;
    this.fill();
  }

  /** Cancels the group's tasks (running and waiting), not its body. */
  cancelTasks(): void {
    this.admitWaiting();
    this.cancelLive(this.body);
  }

  override stop(): void {
    this.admitWaiting();
    super.stop();
  }

  protected ended(child: Task): void {
    if (child !== this.body) this.running--;
    if (hasFailed(child) && !this.stopping) {
      this.failed.push(outcomeOf(child));
      this.stop();
    }
    this.fill();
  }

  describe(): string {
    return `a group of ${this.running} running and ${this.waiting.size} waiting task(s)${this.body?.status === "pending" ? " and its body" : ""}`;
  }

  /** Starts waiting tasks, then the feed's, while there is room under the limit. */
  private fill(): void {
    while (this.running < this.limit) {
      if (!this.waiting.isEmpty()) this.enter(this.waiting.shift()!);
      else if (this.feed === null || this.stopping) return;
      else {
        let child: Task | null;
        try {
          child = this.feed(this.owner);
        } catch (error) {
          // Making it failed (a spawn hook threw, say): a failure of the group, as a throwing spawn in its body is.
          this.feed = null;
          this.failed.push(error);
          this.stop();
          return;
        }
        if (child === null) {
          this.feed = null;
          return;
        }
        this.enter(child);
      }
    }
  }

  /** A task of the group starts; in a stopping group, it is cancelled before its first step. */
  private enter(child: Task): void {
    this.running++;
    this.add(child);
    if (this.stopping) this.k.cancelChild(this.owner, child);
  }

  /** Every waiting task enters (to be cancelled at once: its body never runs). */
  private admitWaiting(): void {
    for (let child = this.waiting.shift(); child !== undefined; child = this.waiting.shift()) {
      this.running++;
      this.add(child);
    }
  }
}

function bodySpawnOptions(options: GroupOptions): SpawnOptions | undefined {
  const { name, give } = options;
  if (name === undefined && give === undefined) return undefined;
  return checkSpawnOptions({ name, give }, "group");
}

/**
 * A task group, handed to the body of {@link group}: spawn tasks into it,
 * cancel them. Every task of the group is a child of the task that called
 * `group`, which awaits them all.
 *
 * @example
 * ```ts
 * yield* B.group(function* (g) {
 *   for (const url of urls) g.spawn(fetchPage, url);
 * });
 * ```
 * @throws from `spawn`: TypeError for a bad body or options, or once the group has ended.
 */
export class Group {
  /** @internal */
  constructor(private readonly crew: Crew) {}

  /** How many of the group's tasks run (the body excluded), cancelled ones included until they have ended. */
  get running(): number {
    return this.crew.running;
  }

  /** How many of the group's tasks wait for a place under the limit. */
  get waiting(): number {
    return this.crew.waiting.size;
  }

  /**
   * Spawns `fn(...args)` into the group: at once, or once a place under the
   * limit frees up (in the order of the calls). May be called by the body, by
   * a task of the group, or by any task of the same domain while the group
   * runs; the new task is a child of the group's owner (the task that called
   * `group`), which alone may await it: the returned task is for inspection
   * (`status`, `name`), the group awaits it. In a group that is failing, the
   * task is cancelled before its first step. Options come first, as for
   * `B.spawn`: `name`, and `give` (resources of the calling task).
   *
   * @example
   * ```ts
   * g.spawn(worker, jobs);
   * g.spawn({ name: "relay", give: [client] }, relay, client);
   * ```
   * @throws TypeError outside a task, from another domain, once the group has
   * ended, when `fn` is not a task body (`B.TaskBody`), or for bad options (`orphans`
   * is refused: a group's task belongs to the group).
   * @throws what a spawn hook throws (`NotOwner` for a resource the caller does not own).
   */
  spawn<A extends unknown[], T>(fn: TaskBody<A, T>, ...args: A): Task<T>;
  spawn<A extends unknown[], T>(options: GroupSpawnOptions, fn: TaskBody<A, T>, ...args: A): Task<T>;
  spawn(first: unknown, ...rest: unknown[]): Task<unknown> {
    const spawner = currentTask("g.spawn()");
    if (kernelOf("g.spawn()") !== this.crew.k) {
      throw new TypeError(`${spawner} cannot spawn into a group of another domain: a group's tasks run on its owner's domain`);
    }
    if (typeof first === "function") return this.crew.spawn(spawner, undefined, first, rest);
    const options = checkSpawnOptions(first, "g.spawn");
    if (options.orphans !== undefined) {
      throw new TypeError("g.spawn({ orphans }): a group's task belongs to the group; spawn background tasks with B.spawn");
    }
    return this.crew.spawn(spawner, options, rest[0], rest.slice(1));
  }

  /**
   * Cancels every task of the group in one wave: running ones get `Cancelled`,
   * waiting ones never start. The body is not cancelled; it goes on, and the
   * group still ends once everything has ended (`group` returns the body's
   * value). Tasks spawned afterwards run normally. Never suspends.
   *
   * @example
   * ```ts
   * yield* B.group(function* (g) {
   *   for (const w of workers) g.spawn(w);
   *   yield* deadline.wait();
   *   g.cancel();
   * });
   * ```
   * @throws nothing: it only asks the tasks to stop.
   */
  cancel(): void {
    this.crew.cancelTasks();
  }

  /** @internal Hands the group a feed of tasks to start as places free up (forEach, map; see `Feed`). */
  feed(feed: Feed): void {
    this.crew.startFeed(feed);
  }
}

// A crew and a group whose maps outlive the groups programs make (see kernel/shapes.ts).
const crew = new Crew(null as unknown as Kernel, null as unknown as Task, Number.POSITIVE_INFINITY);
keepShapes(crew, new Group(crew));

function* runGroup<T>(options: GroupOptions, body: unknown): Generator<Instruction, T, unknown> {
  const owner = currentTask("group()");
  const crew = new Crew(runningKernel()!, owner, checkLimit(options.limit, "group({ limit })"));
  crew.startBody(options, body, new Group(crew));
  yield* crew.supervise();
  if (crew.failed.length !== 0) throw failureOf(crew.failed);
  return outcomeOf(crew.body!) as T;
}

/**
 * Runs `body(g)` as a child task and returns its value once it and every
 * task spawned into `g` have ended (Trio's nursery). The first failure — of
 * the body or of a task — cancels all the others (waiting ones never start),
 * waits for their cleanup, and is thrown; a task that fails meanwhile (its
 * cleanup threw) is not forgotten: the group then throws a `Failures` of
 * every failure, the first first. `g.cancel()` cancels the group's tasks in
 * one wave. With `{ limit: n }`, at most `n` tasks of the group run at once.
 * Cancelling the caller cancels the whole group, which it still awaits before
 * `Cancelled` reaches it (or the errors its tasks' cleanup threw, in its place).
 *
 * The body runs in its own task: tasks the caller spawned itself are not its
 * children (it cannot await them), and resources it needs are given with
 * `{ give }`.
 *
 * @example
 * ```ts
 * const pages = new Map<string, string>();
 * yield* B.group({ limit: 8 }, function* (g) {
 *   for (const url of urls) g.spawn(function* () { pages.set(url, yield* fetchPage(url)); });
 * });
 * ```
 * @throws the first error of the body or of a task of the group; a `Failures`
 * of every failure, the first first, when tasks also failed while cancelled.
 * @throws RangeError when `limit` is not an integer ≥ 1 or `Infinity`.
 * @throws TypeError outside a task, when `body` is not a task body (`B.TaskBody`),
 * or for bad options.
 * @throws Cancelled when the current task is cancelled (after the group ended).
 */
export function group<T>(body: TaskBody<[Group], T>): Operation<T>;
export function group<T>(options: GroupOptions, body: TaskBody<[Group], T>): Operation<T>;
export function group(first: unknown, second?: unknown): Operation<unknown> {
  if (typeof first === "function") return runGroup({}, first);
  if (first === null || typeof first !== "object" || Array.isArray(first) || isGeneratorObject(first)) {
    throw new TypeError(`group() expects a generator function, or options then a generator function; got ${describe(first)}`);
  }
  return runGroup(first as GroupOptions, second);
}

/**
 * @internal A limit on how many tasks run at once: an integer ≥ 1, or Infinity (undefined).
 * @throws RangeError naming `what`.
 */
export function checkLimit(value: unknown, what: string): number {
  if (value === undefined || value === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new RangeError(`${what} must be an integer ≥ 1, or Infinity for no limit; got ${describe(value)}`);
  }
  return value;
}
