/**
 * A domain's connections to the other domains: the mailbox through which
 * calls, cancellations and results travel. Dom0 talks to each worker through
 * its `Worker`; workers talk to each other through MessageChannels of their
 * own (a full mesh), so a nested `call` never goes through a busy dom0.
 *
 * A postMessage costs far more than cloning a small message: it wakes the
 * receiving thread. So messages to one domain wait in an outbox until the
 * current slice of the scheduler ends (a microtask; at most `sliceMs` later
 * when the domain stays busy) or the domain has nothing to run (its events
 * backend may block in `select`), and go as one message when there are several:
 * a worker that ran many calls in a slice sends their results together.
 * Calls are posted at once (after what the outbox holds for their domain, to
 * keep the order): an argument that cannot be cloned makes `call` itself
 * throw, and a worker gets the calls one message each, as they were made, so
 * what it shares with idle domains (see work-sharing.ts) does not depend on
 * how they were grouped.
 *
 * What arrives is checked as it is read: a message that is not one of
 * Bobbin's (a parallel task posting on its worker's port, say) breaks the
 * domain that sent it, through `onBroken`, with an error that names that
 * domain and the message; it never throws out of a port's handler.
 */
import { MessagePort, receiveMessageOnPort, type Transferable, type Worker } from "node:worker_threads";
import { describe } from "../describe.js";
import { type DomainSnapshot, snapshotDomain } from "../diagnostics/snapshot.js";
import { DomainUnresponsive } from "../errors.js";
import type { Kernel } from "../kernel/kernel.js";
import type { Task } from "../kernel/task.js";
import { RESUMED } from "../operation.js";
import type { Slot } from "./portable.js";
import {
  type Call,
  callMessage,
  decodeError,
  failedMessage,
  isId,
  isSnapshot,
  M,
  type Message,
  readCall,
  uncloneableArguments,
  uncloneableResult,
} from "./wire.js";

/** @internal A Worker, a MessagePort or a worker's parentPort. */
export type Port = Pick<MessagePort, "postMessage" | "on" | "off" | "unref" | "ref"> | Worker;

/** @internal A call this domain made and is waiting for. */
export interface PendingCall {
  /** The domain running the call. */
  readonly domain: number;
  /** The parallel task's name, for errors. */
  readonly name: string;
  /** Armed when the call was cancelled: the domain must end it within the grace period. */
  grace: ReturnType<typeof setTimeout> | null;
  /** The proxy task parked until the result arrives. */
  waiter: Task | null;
  /** `slots`: where `value` held portables (see portable.ts), null when it held none; both as they arrived. */
  result: { ok: true; value: unknown; slots: unknown } | { ok: false; error: unknown } | null;
}

/** @internal What a worker domain does with the calls and cancellations it receives. */
export interface CallHost {
  call(call: Call): void;
  cancel(from: number, id: number): void;
  idle?(from: number): void;
  /** Dom0 says every worker has started: calls may start. */
  go(): void;
  /** Dom0 says the run is over. */
  shutdown(): void;
  /** The calls this domain runs: the caller's domain, the call's id there, and the task running it. */
  serving?(): DomainSnapshot["serving"];
}

/** @internal */
export class DomainLink {
  private readonly ports = new Map<number, Port>();
  /** Each port's message handler, which knows the domain at the other end. */
  private readonly handlers = new Map<number, (message: unknown) => void>();
  private readonly pending = new Map<number, PendingCall>();
  private nextCall = 1;
  /** Domains that died or were terminated, and why: calls to them fail at once. */
  private readonly down = new Map<number, Error>();
  host: CallHost | null = null;
  /** Dom0: a worker has started. */
  onReady: ((domain: number) => void) | null = null;
  /**
   * What to do when a domain breaks the rules: it does not end a cancelled
   * call within the grace period (`DomainUnresponsive`), or sends a message
   * that is not one of Bobbin's.
   */
  onBroken: ((domain: number, error: Error) => void) | null = null;
  /** Domains a `call` from here may land on: every worker but this one. */
  readonly others: number[];
  /** Dumps waiting for the other domains' snapshots, by id. */
  private readonly dumps = new Map<number, (snapshot: DomainSnapshot) => void>();
  private nextDump = 1;
  /** Messages not posted yet, by domain (see the file comment). */
  private readonly outbox = new Map<number, Message[]>();
  private flushQueued = false;
  private readonly flushFn = (): void => this.flush();

  constructor(
    readonly kernel: Kernel,
    /** How many worker domains the run has (dom0 excluded). */
    readonly workers: number,
  ) {
    this.others = [];
    for (let d = 1; d <= workers; d++) if (d !== kernel.domain) this.others.push(d);
  }

  connect(domain: number, port: Port): void {
    const handler = (message: unknown): void => this.receiveFrom(domain, message);
    this.ports.set(domain, port);
    this.handlers.set(domain, handler);
    port.on("message", handler);
  }

  /**
   * Sends a call and returns its id; wait for its result with `takeResult`.
   * `args` are already encoded (`encodePortables`); `slots` say where they held portables.
   */
  sendCall(
    domain: number,
    url: string,
    name: string,
    args: unknown[],
    pinned: boolean,
    contexts: boolean,
    transfer: readonly Transferable[],
    slots: readonly Slot[] | null,
  ): number {
    const dead = this.down.get(domain);
    if (dead !== undefined) throw dead;
    const id = this.nextCall++;
    const message = callMessage({ id, from: this.kernel.domain, url, name, args, pinned, contexts, slots });
    try {
      this.post(domain, message, transfer);
    } catch (error) {
      throw uncloneableArguments(name, args, error);
    }
    this.pending.set(id, { domain, name, grace: null, waiter: null, result: null });
    return id;
  }

  /** Posts `message` to `domain` now, after what the outbox holds for it. */
  post(domain: number, message: Message, transfer: readonly Transferable[] = []): void {
    const port = this.port(domain);
    this.flushTo(domain, port);
    port.postMessage(message, transfer as Transferable[]);
  }

  /**
   * Tells the domain running call `id` that its caller cancelled it. If the
   * domain has not ended the call within `graceMs` (a parallel task stuck in
   * a synchronous loop never reaches a suspension point), `onBroken`
   * hears of it.
   */
  cancelCall(id: number, caller: Task, graceMs: number): void {
    const call = this.pending.get(id);
    if (call === undefined) return;
    this.send(call.domain, [M.CANCEL, id, this.kernel.domain]);
    if (call.result !== null || call.grace !== null) return;
    call.grace = setTimeout(() => {
      call.grace = null;
      if (call.result !== null) return;
      this.onBroken?.(call.domain, new DomainUnresponsive(call.domain, String(caller), graceMs));
    }, graceMs);
  }

  /** The result of call `id`, if it arrived; otherwise `waiter` will be woken when it does. */
  takeResult(id: number, waiter: Task): PendingCall["result"] {
    const call = this.pending.get(id)!;
    if (call.result !== null) {
      this.pending.delete(id);
      return call.result;
    }
    call.waiter = waiter;
    return null;
  }

  /** The domain running call `id` (for diagnostics). */
  domainOf(id: number): number | undefined {
    return this.pending.get(id)?.domain;
  }

  /** The id of the call `task` (a proxy) is parked waiting for, if any (for dumps). */
  callWaitedBy(task: Task): number | undefined {
    for (const [id, call] of this.pending) if (call.waiter === task) return id;
    return undefined;
  }

  /**
   * Asks every connected domain for a snapshot of its tasks; resolves with
   * those that answered within `ms`, and the domains that did not.
   */
  requestSnapshots(ms: number): Promise<{ answers: DomainSnapshot[]; unanswered: number[] }> {
    const id = this.nextDump++;
    const answers: DomainSnapshot[] = [];
    const waiting = new Set<number>();
    for (const domain of this.ports.keys()) {
      if (this.down.has(domain)) continue;
      try {
        this.send(domain, [M.DUMP, id, this.kernel.domain]);
        waiting.add(domain);
      } catch {
        // a port closing: that domain is counted as unanswered below
      }
    }
    if (waiting.size === 0) return Promise.resolve({ answers, unanswered: [] });
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.dumps.delete(id);
        resolve({ answers, unanswered: [...waiting].sort((a, b) => a - b) });
      };
      const timer = setTimeout(done, ms);
      this.dumps.set(id, (snapshot) => {
        answers.push(snapshot);
        waiting.delete(snapshot.domain);
        if (waiting.size === 0) done();
      });
    });
  }

  /** Forgets the waiter of call `id` (its proxy was cancelled and stops waiting). */
  forgetWaiter(id: number): void {
    const call = this.pending.get(id);
    if (call !== undefined) call.waiter = null;
  }

  /** A domain died: every call pending on it fails with `error`, and so will calls to it. */
  domainDown(domain: number, error: Error): void {
    if (!this.down.has(domain)) this.down.set(domain, error);
    for (const [id, call] of this.pending) {
      if (call.domain === domain && call.result === null) this.receive(failedMessage(id, error));
    }
  }

  /**
   * Takes the messages already waiting on this domain's ports without going
   * back to Node's loop (a busy worker hears idle peers between two calls).
   */
  receivePending(): void {
    for (const [domain, port] of this.ports) {
      if (!(port instanceof MessagePort)) continue;
      for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) this.receiveFrom(domain, m.message);
    }
  }

  /** Queues `message` for `domain`: it is posted when the current slice ends (see the file comment). */
  send(domain: number, message: Message): void {
    this.port(domain); // a domain not connected is a RangeError now, not when the outbox is flushed
    const queued = this.outbox.get(domain);
    if (queued === undefined) this.outbox.set(domain, [message]);
    else queued.push(message);
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flushFn);
    }
  }

  /** Posts every queued message now. */
  flush(): void {
    this.flushQueued = false;
    for (const [domain, port] of this.ports) this.flushTo(domain, port);
  }

  private flushTo(domain: number, port: Port): void {
    const queued = this.outbox.get(domain);
    if (queued === undefined) return;
    this.outbox.delete(domain);
    try {
      port.postMessage(queued.length === 1 ? queued[0] : [M.BATCH, queued]);
    } catch {
      // Something in the batch cannot be cloned: one by one, to find it.
      for (const message of queued) this.postAlone(port, message);
    }
  }

  /**
   * Posts one message; a result that cannot be cloned becomes an
   * `Uncloneable` failure of its call (the call must end all the same).
   */
  private postAlone(port: Port, message: Message): void {
    try {
      port.postMessage(message);
    } catch (error) {
      if (message[0] !== M.RETURNED && message[0] !== M.RETURNED_PORTABLE) {
        this.kernel.life.internalError(error);
        return;
      }
      port.postMessage(failedMessage(message[1], uncloneableResult(error)));
    }
  }

  /** Closes the worker-to-worker channels (a worker stopping), once what is queued has been posted. */
  close(): void {
    this.flush();
    for (const [domain, port] of this.ports) {
      port.off("message", this.handlers.get(domain)!);
      if ("close" in port && typeof port.close === "function") port.close();
    }
    this.ports.clear();
    this.handlers.clear();
  }

  private port(domain: number): Port {
    const port = this.ports.get(domain);
    if (port === undefined) throw new RangeError(`domain ${domain} is not connected to domain ${this.kernel.domain}`);
    return port;
  }

  /** A message from `domain`: one that is not Bobbin's breaks that domain (see the file comment). */
  private receiveFrom(domain: number, message: unknown): void {
    try {
      this.receive(message);
    } catch (error) {
      const broken = new TypeError(
        `domain ${domain} sent domain ${this.kernel.domain} a message that is not one of Bobbin's (${describe(message)}): ` +
          `${(error as Error)?.message ?? String(error)}. Bobbin's ports carry its own messages only: a parallel task must not ` +
          "post on its worker's parentPort nor on the ports in its workerData",
        { cause: error },
      );
      if (this.onBroken === null) this.kernel.life.fail(broken);
      else this.onBroken(domain, broken);
    }
  }

  /** @throws TypeError when `message` is not one of Bobbin's. */
  private receive(message: unknown): void {
    if (!Array.isArray(message)) throw new TypeError("a message is an array");
    switch (message[0]) {
      case M.RETURNED:
        this.settle(idOf(message[1]), { ok: true, value: message[2], slots: null });
        return;
      case M.RETURNED_PORTABLE:
        this.settle(idOf(message[1]), { ok: true, value: message[2], slots: message[3] });
        return;
      case M.FAILED:
        this.settle(idOf(message[1]), { ok: false, error: message[2] });
        return;
      case M.CALL: {
        const call = readCall(message);
        this.connected(call.from);
        this.host?.call(call);
        return;
      }
      case M.CANCEL: {
        const from = this.connected(message[2]);
        this.host?.cancel(from, idOf(message[1]));
        return;
      }
      case M.IDLE: {
        const from = this.connected(message[1]);
        this.host?.idle?.(from);
        return;
      }
      case M.FATAL:
        this.kernel.life.fail(decodeError(message[1]));
        return;
      case M.SHUTDOWN:
        this.host?.shutdown();
        return;
      case M.READY:
        this.onReady?.(this.connected(message[1]));
        return;
      case M.GO:
        this.host?.go();
        return;
      case M.DUMP:
        this.send(this.connected(message[2]), [
          M.SNAPSHOT,
          idOf(message[1]),
          snapshotDomain(this.kernel, this, this.host?.serving?.() ?? []),
        ]);
        return;
      case M.SNAPSHOT:
        if (!isSnapshot(message[2])) throw new TypeError("a snapshot is a domain's tasks as dump() reports them");
        this.dumps.get(idOf(message[1]))?.(message[2]);
        return;
      case M.BATCH:
        if (!Array.isArray(message[1])) throw new TypeError("a batch is an array of messages");
        for (const m of message[1]) this.receive(m);
        return;
      default:
        throw new TypeError(`its kind is not one of Bobbin's messages (${describe(message[0])})`);
    }
  }

  /** `domain`, when this domain is connected to it. */
  private connected(domain: unknown): number {
    if (!isId(domain) || !this.ports.has(domain)) throw new TypeError(`${describe(domain)} is not a domain connected to this one`);
    return domain;
  }

  /** Call `id` ended: its proxy, if parked, wakes up to take the result. */
  private settle(id: number, result: NonNullable<PendingCall["result"]>): void {
    const call = this.pending.get(id);
    if (call === undefined || call.result !== null) return;
    if (call.grace !== null) {
      clearTimeout(call.grace);
      call.grace = null;
    }
    call.result = result;
    const waiter = call.waiter;
    if (waiter !== null) {
      call.waiter = null;
      this.kernel.wake(waiter, RESUMED);
    }
  }
}

/** `value`, when it can be an id (see `isId`). */
function idOf(value: unknown): number {
  if (!isId(value)) throw new TypeError(`${describe(value)} is not an id`);
  return value;
}
