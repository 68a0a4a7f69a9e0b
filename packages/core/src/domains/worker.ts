/**
 * The entry point of a worker domain. Its root task serves calls: it starts
 * one queued call whenever the domain is idle (so that queued calls can still
 * be shared with idle domains, see work-sharing.ts), as a runner task that
 * spawns the parallel task's body, awaits it and replies to the caller.
 */
import { parentPort, workerData } from "node:worker_threads";
import { awaitTask } from "../await.js";
import { cancel } from "../cancel.js";
import { receiveValues } from "../context.js";
import { Tracing } from "../diagnostics/tracing.js";
import { Cancelled } from "../errors.js";
import { runningTask } from "../kernel/current.js";
import type { Kernel } from "../kernel/kernel.js";
import { SplitMix32 } from "../kernel/random.js";
import type { Task } from "../kernel/task.js";
import { childrenOf } from "../kernel/tree.js";
import type { Instruction, TaskBody } from "../operation.js";
import { care, orphans } from "../orphans.js";
import { promise } from "../promise.js";
import { startKernel } from "../run-kernel.js";
import { spawn } from "../spawn.js";
import { Trigger } from "../trigger.js";
import { loadEvents } from "./define-events.js";
import { definedTask, loadTask } from "./define-task.js";
import { ThreadDomains } from "./host.js";
import { type CallHost, DomainLink } from "./link.js";
import { becomeWorkerDomain } from "./loading.js";
import type { WorkerSetup } from "./pool.js";
import { decodePortables, encodePortables, importModules, portableModules } from "./portable.js";
import { registerTsx } from "./typescript.js";
import { type Call, callMessage, encodeError, failedMessage, M, type Message } from "./wire.js";
import { SharingBoard, SharingPolicy } from "./work-sharing.js";

const key = (from: number, id: number): string => `${from}:${id}`;

/** Receives calls, cancellations and idle notices from other domains. */
class WorkerHost implements CallHost {
  /** Calls received and not started yet (the shareable queue). */
  readonly queue: Call[] = [];
  readonly runners = new Map<string, Task>();
  /** Calls handed to another domain, which hears of their cancellation through us. */
  readonly forwarded = new Map<string, number>();
  /** Wakes the serving task: a call arrived, the domain is idle, or it must stop. */
  wakeup: Trigger | null = null;
  /** Whether the serving task waits for the domain to be idle before starting a call. */
  waitingForIdle = false;
  /** Whether dom0 said every worker has started (no call starts before). */
  started = false;
  /** Whether peers were told this domain is idle since its queue was last fed. */
  announcedIdle = false;
  stopping = false;

  constructor(
    readonly kernel: Kernel,
    readonly link: DomainLink,
    readonly sharing: SharingPolicy,
    readonly board: SharingBoard,
  ) {}

  call(call: Call): void {
    this.queue.push(call);
    this.announcedIdle = false;
    this.board.setIdle(this.kernel.domain, false);
    this.queueChanged();
    this.offerWork();
    if (!this.waitingForIdle || this.kernel.ready.isEmpty()) this.wake();
  }

  /** Publishes the queue's length on the board. */
  queueChanged(): void {
    if (this.sharing.enabled) this.board.setQueued(this.kernel.domain, this.queue.length);
  }

  serving(): { from: number; id: number; uid: number }[] {
    const serving: { from: number; id: number; uid: number }[] = [];
    for (const [k, runner] of this.runners) {
      const body = childrenOf(runner)[0]; // the runner's only child: the parallel task itself
      const [from, id] = k.split(":").map(Number) as [number, number];
      if (body !== undefined) serving.push({ from, id, uid: body.uid });
    }
    return serving;
  }

  /** Hands queued calls to idle domains, if there are any. */
  offerWork(): void {
    if (!this.sharing.enabled || !this.started) return;
    const keep = this.runners.size === 0 ? 1 : 0; // an idle domain keeps the call it is about to start
    if (this.queue.length <= keep) return;
    for (const thief of this.board.idleDomains(this.kernel.domain)) {
      if (this.board.claimIdle(thief)) this.shareWith(thief, keep);
      if (this.queue.length <= keep) return;
    }
  }

  cancel(from: number, id: number): void {
    const k = key(from, id);
    const runner = this.runners.get(k);
    if (runner !== undefined) {
      this.kernel.requestCancel(runner);
      return;
    }
    const thief = this.forwarded.get(k);
    if (thief !== undefined) {
      this.forwarded.delete(k);
      this.link.send(thief, [M.CANCEL, id, from]);
      return;
    }
    const i = this.queue.findIndex((m) => m.from === from && m.id === id);
    if (i >= 0) {
      this.queue.splice(i, 1);
      this.queueChanged();
      this.link.send(from, failedMessage(id, new Cancelled("the call was cancelled before it started")));
    }
  }

  /** Domain `thief` said it is idle: share queued calls with it if it still is. */
  idle(thief: number): void {
    const keep = this.runners.size === 0 ? 1 : 0;
    if (this.queue.length > keep && this.board.claimIdle(thief)) this.shareWith(thief, keep);
  }

  private shareWith(thief: number, keep: number): void {
    for (const call of this.sharing.share(this.queue, thief, keep)) {
      this.forwarded.set(key(call.from, call.id), thief);
      this.link.post(thief, callMessage(call));
    }
    this.queueChanged();
  }

  /** The scheduler found nothing to run. */
  domainIdle(): boolean {
    if (!this.waitingForIdle) return false;
    return this.wake();
  }

  go(): void {
    this.started = true;
    this.wake();
  }

  shutdown(): void {
    this.stopping = true;
    this.wake();
  }

  wake(): boolean {
    const wakeup = this.wakeup;
    if (wakeup === null) return false;
    this.wakeup = null;
    return wakeup.signal();
  }

  /** Raises this domain's idle flag and tells the busiest domain, if any has queued work. */
  announceIdle(): void {
    if (this.announcedIdle || !this.sharing.enabled) return;
    this.announcedIdle = true;
    this.board.setIdle(this.kernel.domain, true);
    const busiest = this.board.busiest(this.kernel.domain);
    if (busiest > 0) this.link.send(busiest, [M.IDLE, this.kernel.domain]);
  }
}

/** The arguments of a call that brought its caller's context values (the last element): the runner takes them, and its child inherits them. */
function takeContextValues(args: unknown[]): unknown[] {
  receiveValues(runningTask()!, args[args.length - 1]);
  return args.slice(0, -1);
}

/** Runs one call; its module was loaded by `serve`. */
function* runner(host: WorkerHost, call: Call, body: TaskBody<unknown[], unknown>): Generator<Instruction, void, unknown> {
  const { id, from } = call;
  let child: Task | null = null;
  let reply: Message;
  try {
    // Decoded here, once the task's module (which defines its portables) is loaded.
    const decoded = call.slots === null ? call.args : (decodePortables(call.args, call.slots) as unknown[]);
    const args = call.contexts ? takeContextValues(decoded) : decoded;
    child = spawn({ name: call.name }, body, ...args); // named as its caller knows it
    const result = yield* awaitTask(child);
    if (result.ok) {
      const packed = encodePortables(result.value);
      reply = packed === null ? [M.RETURNED, id, result.value] : [M.RETURNED_PORTABLE, id, packed.value, packed.slots];
    } else reply = failedMessage(id, result.error);
  } catch (error) {
    // Cancelled by the caller (or failing here): the child's subtree ends before the reply,
    // which carries what the child's cleanup threw, if it failed.
    let outcome = error;
    if (child !== null && child.status === "pending") {
      try {
        yield* cancel(child);
      } catch (cleanup) {
        outcome = cleanup;
      }
    }
    reply = failedMessage(id, outcome);
  }
  host.runners.delete(key(from, id));
  host.link.send(from, reply);
}

function* park(host: WorkerHost, untilIdle: boolean): Generator<Instruction, void, unknown> {
  host.waitingForIdle = untilIdle;
  host.wakeup = new Trigger();
  yield* host.wakeup.wait();
  host.waitingForIdle = false;
}

function* serve(host: WorkerHost): Generator<Instruction, void, unknown> {
  const runners = orphans<void>();
  host.link.send(0, [M.READY, host.kernel.domain]);
  while (!host.started && !host.stopping) yield* park(host, false);
  for (;;) {
    for (let t = care(runners); t; t = care(runners)) yield* awaitTask(t);
    host.link.receivePending();
    const next = host.queue[0];
    if (next !== undefined) {
      // The call stays queued (and shareable) while its module loads.
      let body = definedTask(next.url, next.name);
      let failure: unknown = null;
      try {
        body ??= yield* promise(() => loadTask(next.url, next.name));
        // Portables among the arguments whose modules are not loaded here (imported for their types only, say).
        const modules = next.slots === null ? [] : portableModules(next.slots);
        if (modules.length !== 0) yield* promise(() => importModules(modules));
      } catch (error) {
        failure = error;
        body = undefined;
      }
      const i = host.queue.indexOf(next);
      if (i < 0) continue; // shared or cancelled meanwhile
      host.queue.splice(i, 1);
      host.queueChanged();
      if (host.queue.length === 0) host.sharing.reset();
      if (body === undefined) {
        host.link.send(next.from, failedMessage(next.id, failure));
        continue;
      }
      host.runners.set(key(next.from, next.id), spawn({ orphans: runners }, runner, host, next, body));
      host.offerWork();
      yield* park(host, true);
      continue;
    }
    if (host.stopping && runners.size === 0) return;
    host.announceIdle();
    yield* park(host, false);
  }
}

/** The kernel's view of the other domains, from a worker. */
class WorkerDomains extends ThreadDomains {
  constructor(
    link: DomainLink,
    private readonly host: WorkerHost,
  ) {
    super(link);
  }

  idle(): boolean {
    if (this.host.domainIdle()) return true;
    // The loop may now block in its events backend's select: what waits in the outbox goes first.
    this.link.flush();
    return false;
  }

  fatal(error: unknown): boolean {
    // Dom0's run fails, and cancels the calls running here.
    this.link.send(0, [M.FATAL, encodeError(error)]);
    return true;
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

async function main(): Promise<void> {
  const setup = workerData as WorkerSetup;
  becomeWorkerDomain();
  if (setup.tsx !== null) await registerTsx(setup.tsx);
  const { config, domain } = setup;
  const events = config.eventsLocation === null ? undefined : await loadEvents(config.eventsLocation.url, config.eventsLocation.name);
  let host: WorkerHost | null = null;
  await startKernel(
    function* serveCalls() {
      yield* serve(host!);
    },
    {
      config,
      domain,
      events: events?.(domain) ?? null,
      random: new SplitMix32(config.seed + domain),
      policy: null,
      tracing: new Tracing(null, config.taskAges, domain, config.flightRecorder),
    },
    (kernel) => {
      const link = new DomainLink(kernel, config.workers);
      link.connect(0, parentPort!);
      for (const [peer, port] of setup.peers) link.connect(peer, port);
      const h = new WorkerHost(kernel, link, new SharingPolicy(config.workSharing), new SharingBoard(setup.board, config.workers + 1));
      host = h;
      link.host = h;
      kernel.domains = new WorkerDomains(link, h);
      link.onBroken = (_domain, error) => kernel.life.fail(error);
    },
  );
  host!.link.close();
}

void main().catch((error: unknown) => {
  parentPort?.postMessage([M.FATAL, encodeError(error)] satisfies Message);
  parentPort?.close();
});
