/**
 * The entry point of a worker domain. It runs a scheduler whose root task
 * serves calls: each call becomes a runner task that spawns the parallel
 * task's body, awaits it and replies to the caller's domain.
 */
import { parentPort, workerData } from "node:worker_threads";
import { awaitTask } from "./await.js";
import { cancel } from "./cancel.js";
import { definedTask, loadEvents, loadTask } from "./define-task.js";
import type { WorkerSetup } from "./domain-pool.js";
import type { CallHost, DomainLink } from "./domain-link.js";
import { care, orphans } from "./orphans.js";
import type { Instruction } from "./operation.js";
import { promise } from "./promise.js";
import { startDomain } from "./run.js";
import type { Scheduler } from "./scheduler.js";
import { spawn } from "./spawn.js";
import type { Task } from "./task.js";
import { Trigger } from "./trigger.js";
import { encodeError, type Message } from "./wire.js";
import { Cancelled, Uncloneable } from "./errors.js";

type CallMessage = Extract<Message, { kind: "call" }>;

/** Receives calls from other domains and hands them to the serving root task. */
class WorkerHost implements CallHost {
  readonly inbox: CallMessage[] = [];
  readonly runners = new Map<string, Task>();
  wakeup: Trigger | null = null;
  stopping = false;

  constructor(
    readonly sched: Scheduler,
    readonly link: DomainLink,
  ) {}

  call(message: CallMessage): void {
    this.inbox.push(message);
    this.wakeup?.signal();
  }

  cancel(from: number, id: number): void {
    const runner = this.runners.get(`${from}:${id}`);
    if (runner !== undefined) {
      this.sched.requestCancel(runner);
      return;
    }
    const i = this.inbox.findIndex((m) => m.from === from && m.id === id);
    if (i >= 0) {
      this.inbox.splice(i, 1);
      this.reply(from, { kind: "result", id, ok: false, error: encodeError(new Cancelled("the call was cancelled before it started")) });
    }
  }

  stop(): void {
    this.stopping = true;
    this.wakeup?.signal();
  }

  reply(domain: number, message: Message): void {
    try {
      this.link.send(domain, message);
    } catch (error) {
      if (message.kind !== "result") throw error;
      this.link.send(domain, {
        kind: "result",
        id: message.id,
        ok: false,
        error: encodeError(new Uncloneable("the result of a parallel task", String((error as Error).message ?? error))),
      });
    }
  }
}

function* runner(host: WorkerHost, message: CallMessage): Generator<Instruction, void, unknown> {
  const { id, from, url, name, args } = message;
  let child: Task | null = null;
  let reply: Message;
  try {
    const body = definedTask(url, name) ?? (yield* promise(() => loadTask(url, name)));
    child = spawn(body, ...args);
    const result = yield* awaitTask(child);
    reply = result.ok ? { kind: "result", id, ok: true, value: result.value } : { kind: "result", id, ok: false, error: encodeError(result.error) };
  } catch (error) {
    // Cancelled by the caller (or failing here): the child's subtree ends before the reply.
    if (child !== null && child.status === "pending") yield* cancel(child);
    reply = { kind: "result", id, ok: false, error: encodeError(error) };
  }
  host.runners.delete(`${from}:${id}`);
  host.reply(from, reply);
}

function* serve(host: WorkerHost): Generator<Instruction, void, unknown> {
  const runners = orphans<void>();
  for (;;) {
    for (let t = care(runners); t; t = care(runners)) yield* awaitTask(t);
    const message = host.inbox.shift();
    if (message !== undefined) {
      host.runners.set(`${message.from}:${message.id}`, spawn({ orphans: runners }, runner, host, message));
      continue;
    }
    if (host.stopping && runners.size === 0) return;
    host.wakeup = new Trigger();
    yield* host.wakeup.wait();
    host.wakeup = null;
  }
}

async function main(): Promise<void> {
  const setup = workerData as WorkerSetup;
  const events = setup.events === null ? undefined : await loadEvents(setup.events.url, setup.events.name);
  let host: WorkerHost | null = null;
  await startDomain(
    function* () {
      yield* serve(host!);
    },
    {
      domain: setup.domain,
      workers: setup.workers,
      seed: setup.seed,
      pollEvery: setup.pollEvery,
      sliceMs: setup.sliceMs,
      events: events?.(setup.domain) ?? null,
      eventsLocation: setup.events,
      onStart(sched) {
        const link = sched.domainLink();
        link.connect(0, parentPort!);
        for (const [domain, port] of setup.peers) link.connect(domain, port);
        host = new WorkerHost(sched, link);
        link.host = host;
        sched.onShutdown = () => host!.stop();
        sched.onFatal = (error) => link.send(0, { kind: "fatal", error: encodeError(error) });
      },
    },
  );
  host!.link.close();
}

void main().catch((error: unknown) => {
  parentPort?.postMessage({ kind: "fatal", error: encodeError(error) } satisfies Message);
  parentPort?.close();
});
