/**
 * `onSignal` (Miou's `set_signal`): OS signals handled by tasks. A signal
 * arriving from Node's loop queues its handler; a dispatcher of the run (a
 * system task on dom0, beside `main` rather than under it, as Miou runs
 * signal handlers outside the tree) spawns the handler as a task, so it may
 * lock, signal conditions and do I/O like any task.
 */

import { constants } from "node:os";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import * as B from "@bobbin/core";
import * as L from "@bobbin/core/lowlevel";
import { describe } from "@bobbin/core/lowlevel";
import { currentTaskFor } from "./context.js";
import type { Backend } from "./contract.js";

/**
 * A signal handler: a generator function run as a task for each signal.
 *
 * @example
 * ```ts
 * const onHup: SignalHandler = function* (signal) { console.log(`${signal}: reloading`); yield* reload(); };
 * ```
 */
export type SignalHandler = (signal: NodeJS.Signals) => Generator<B.Instruction, unknown, unknown>;

const NO_FAILURE = Symbol("no failure");
const UNCATCHABLE = new Set(["SIGKILL", "SIGSTOP"]);
const ignore = (): void => {};

/** @internal The signal handlers of one run and the queue of signals not yet handled. */
export class SignalTable {
  private readonly handlers = new Map<NodeJS.Signals, SignalHandler>();
  private readonly listeners = new Map<NodeJS.Signals, (signal: NodeJS.Signals) => void>();
  /** Handlers to spawn, with their signal. */
  readonly queue: [SignalHandler, NodeJS.Signals][] = [];
  /** The dispatcher parked for work. */
  trigger: L.Trigger | null = null;
  /** A handler's failure, which fails the run. */
  failure: unknown = NO_FAILURE;
  private disposed = false;
  private dispatching = false;
  /**
   * Keeps Node's loop alive while a handler is set: a signal listener alone
   * holds no handle, so a run whose tasks wait for a signal (Ctrl-C, say)
   * would see its loop drain and fail with `Deadlock` though a signal can
   * still wake them. A listening message port holds the loop as a handle
   * does and, unlike a timer, never fires and is not a timer to whoever
   * counts or virtualises them (a simulated clock would run to its end).
   */
  private keepAlive: MessagePort | null = null;
  /** Settles once the last keep-alive port let go of has left Node's loop (its `'close'` comes a turn after `close()`). */
  private portGone: Promise<void> = Promise.resolve();

  /** Sets a handler, from a task of the run on dom0 (the first one starts the dispatcher). */
  set(signal: NodeJS.Signals, handler: SignalHandler): () => void {
    if (this.disposed) throw new TypeError("onSignal(): the run is over");
    if (!this.dispatching) {
      this.dispatching = true;
      L.spawnSystem(signalDispatcher, this);
    }
    this.handlers.set(signal, handler);
    if (this.keepAlive === null) {
      this.keepAlive = new MessageChannel().port1;
      this.keepAlive.on("message", ignore);
    }
    if (!this.listeners.has(signal)) {
      const listener = (s: NodeJS.Signals): void => this.deliver(s);
      this.listeners.set(signal, listener);
      process.on(signal, listener);
    }
    return () => {
      if (this.handlers.get(signal) !== handler) return;
      this.handlers.delete(signal);
      const listener = this.listeners.get(signal);
      if (listener !== undefined) {
        this.listeners.delete(signal);
        process.off(signal, listener);
      }
      if (this.handlers.size === 0) this.letGo();
    };
  }

  /** Closes the keep-alive port, if one is open (`portGone` says when it has left Node's loop). */
  private letGo(): void {
    const port = this.keepAlive;
    if (port === null) return;
    this.keepAlive = null;
    this.portGone = new Promise((resolve) => {
      port.once("close", resolve);
      port.close();
    });
  }

  /** Whether a handler is set for `signal` (`main` leaves such a signal to it). */
  handles(signal: NodeJS.Signals): boolean {
    return this.handlers.has(signal);
  }

  private deliver(signal: NodeJS.Signals): void {
    const handler = this.handlers.get(signal);
    if (handler === undefined || this.disposed) return;
    this.queue.push([handler, signal]);
    this.trigger?.signal();
  }

  fail(error: unknown): void {
    if (this.failure === NO_FAILURE) this.failure = error;
    this.trigger?.signal();
  }

  get failed(): boolean {
    return this.failure !== NO_FAILURE;
  }

  /** The run is over: stop listening; resolves once nothing of the table is left in Node's loop. */
  dispose(): Promise<void> {
    this.disposed = true;
    for (const [signal, listener] of this.listeners) process.off(signal, listener);
    this.listeners.clear();
    this.handlers.clear();
    this.queue.length = 0;
    this.letGo();
    return this.portGone;
  }
}

function* runHandler(table: SignalTable, handler: SignalHandler, signal: NodeJS.Signals): Generator<B.Instruction, void, unknown> {
  try {
    const gen = handler(signal);
    if (gen === null || typeof gen !== "object" || typeof gen.next !== "function") {
      throw new TypeError(`onSignal(${signal}, handler): the handler must be a generator function (function* (signal) { … })`);
    }
    yield* gen;
  } catch (error) {
    if (!(error instanceof B.Cancelled)) table.fail(error);
  }
}

/**
 * The run's signal dispatcher, a system task: spawns handler tasks as
 * signals arrive, reaps them, and fails (failing the run) when one fails.
 * Core cancels it when `main` has ended.
 */
function* signalDispatcher(table: SignalTable): Generator<B.Instruction, never, unknown> {
  const handlers = B.orphans<void>();
  for (;;) {
    for (let t = B.care(handlers); t; t = B.care(handlers)) yield* B.awaitTask(t);
    if (table.failed) throw table.failure;
    if (table.queue.length === 0) {
      const trigger = new L.Trigger();
      table.trigger = trigger;
      try {
        yield* trigger.wait();
      } finally {
        table.trigger = null;
      }
      continue;
    }
    for (const [handler, signal] of table.queue.splice(0)) B.spawn({ orphans: handlers }, runHandler, table, handler, signal);
  }
}

/**
 * Handles the OS signal `signal` in the current run: each time it arrives,
 * `handler(signal)` runs as a new task on dom0 (as the book's SIGINT
 * handler that broadcasts a condition). Setting a handler again replaces
 * it. While a handler is set, Node's default action (exiting on SIGINT,
 * SIGTERM…) does not happen, and the process stays alive (a run whose
 * tasks only wait for the signal is not a deadlock). Returns a function that removes the handler;
 * handlers are removed when the run ends. A handler that throws fails the
 * run (its `main` is cancelled).
 *
 * @example
 * ```ts
 * const stop = new Condition(), m = new Mutex();
 * onSignal("SIGINT", function* () {
 *   yield* m.protect(() => stop.broadcast());
 * });
 * ```
 * @throws TypeError for an unknown signal, SIGKILL/SIGSTOP, a handler that is
 * not a function, or outside a task of `@bobbin/unix`'s `run`.
 */
export function onSignal(signal: NodeJS.Signals, handler: SignalHandler): () => void {
  if (typeof signal !== "string" || !(signal in constants.signals)) {
    throw new TypeError(`onSignal(signal, handler): unknown Unix signal ${describe(signal)}; use a name such as "SIGINT"`);
  }
  if (UNCATCHABLE.has(signal)) throw new TypeError(`onSignal(): ${signal} cannot be caught`);
  if (typeof handler !== "function") {
    throw new TypeError(
      `onSignal(signal, handler) expects a generator function (function* (signal) { … }) as handler, got ${describe(handler)}`,
    );
  }
  return currentContext("onSignal()").signals.set(signal, handler);
}

/** @internal What a `run` of `@bobbin/unix` shares with its tasks on dom0. */
export interface RunContext {
  /** Dom0's backend, by which the run's tasks find this context. */
  readonly backend: Backend;
  /** Signal handlers of the run. */
  readonly signals: SignalTable;
}

/** The context of each run in progress on this thread, by its dom0 backend. */
const contexts = new Map<Backend, RunContext>();

/** @internal The run has started: its tasks find `context` through its backend. */
export function registerContext(context: RunContext): void {
  contexts.set(context.backend, context);
}

/** @internal The run is over. */
export function unregisterContext(context: RunContext): void {
  contexts.delete(context.backend);
}

/**
 * @internal The dom0 run context of the current task (signal handlers),
 * found through its domain's backend.
 * @throws TypeError outside a task, in a run not started by `@bobbin/unix`'s
 * `run`, or in a worker domain (signal handlers run on dom0).
 */
export function currentContext(what: string): RunContext {
  currentTaskFor(what);
  const events = L.currentEvents();
  const context = events === null ? undefined : contexts.get(events as Backend);
  if (context !== undefined) return context;
  if (B.Domain.self() !== 0) {
    throw new TypeError(
      `${what} is for tasks of dom0 (Unix signal handlers run as tasks on dom0); call it before starting parallel work, or from a task of dom0`,
    );
  }
  throw new TypeError(`${what} needs a run of @bobbin/unix: start the program with run(main) from @bobbin/unix, not @bobbin/core's run`);
}
