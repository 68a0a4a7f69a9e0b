/**
 * Dom0's worker domains: started together on the first `call`/`parallel`,
 * wired to each other, and stopped before `run` settles.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import { NoDomainAvailable } from "../errors.js";
import type { RunConfig } from "../kernel/config.js";
import type { DomainLink } from "./link.js";
import { tsxLocation } from "./typescript.js";
import { M, type Message } from "./wire.js";
import { SharingBoard } from "./work-sharing.js";

/** @internal What a worker needs to become a domain: the run's configuration, and its own place among the domains. */
export interface WorkerSetup {
  readonly config: RunConfig;
  readonly domain: number;
  /** The work-sharing board (see work-sharing.ts). */
  readonly board: SharedArrayBuffer;
  /** Channels to the other workers, by domain. */
  readonly peers: [number, MessagePort][];
  /** Where to find tsx, when the program runs under it (see typescript.ts). */
  readonly tsx: string | null;
}

/**
 * Workers inherit the parent's Node options, except when the main thread runs
 * code given on the command line (`-e`, `--input-type`…): those would break
 * the worker's own entry, so such a process starts its workers without
 * options. (Node refuses V8 options in an explicit list, so it cannot simply
 * be filtered.)
 */
function workerExecArgv(): string[] | undefined {
  return process.execArgv.some((arg) => /^(-e|--eval|-p|--print|--input-type)(=|$)/.test(arg)) ? [] : undefined;
}

/**
 * The worker entry, beside this code. A program bundled into one file has
 * none: the workers could not start (and Node would fail the whole process
 * when one tried), so `call` fails instead, saying how to bundle.
 * @throws NoDomainAvailable when the entry is missing.
 */
function workerEntry(): URL {
  const entry = new URL("./worker.js", import.meta.url);
  if (entry.protocol === "file:" && !existsSync(fileURLToPath(entry))) {
    throw new NoDomainAvailable(
      `no domain is available for a parallel task: the worker entry of @bobbin/core, ${fileURLToPath(entry)}, is missing ` +
        "(the program was bundled). Bundle @bobbin/core/worker as a second entry point beside the program, sharing core: " +
        "esbuild main.ts @bobbin/core/worker --bundle --splitting --format=esm --platform=node --entry-names=[name] --outdir=out " +
        '(see "Bundlers and TypeScript" in @bobbin/core\'s README)',
    );
  }
  return entry;
}

/** @internal */
export class DomainPool {
  private readonly workers: Worker[] = [];
  private readonly exited: Promise<void>[] = [];
  /** Workers stopped on purpose (the run is over, or one was terminated): their exit is no crash. */
  private readonly stopped = new Set<number>();
  private readonly graceMs: number;

  constructor(
    private readonly link: DomainLink,
    config: RunConfig,
    onCrash: (error: Error) => void,
  ) {
    const entry = workerEntry();
    const n = config.workers;
    this.graceMs = config.cancelGraceMs;
    const peers: [number, MessagePort][][] = Array.from({ length: n + 1 }, () => []);
    for (let i = 1; i <= n; i++) {
      for (let j = i + 1; j <= n; j++) {
        const { port1, port2 } = new MessageChannel();
        peers[i]!.push([j, port1]);
        peers[j]!.push([i, port2]);
      }
    }
    // Workers boot tens of ms apart: none starts a call before all have
    // started, so the calls of a first `parallel` start together rather than
    // waiting on (or being shared away from) a worker still booting.
    let ready = 0;
    link.onReady = () => {
      if (++ready !== n) return;
      const go: Message = [M.GO];
      for (let d = 1; d <= n; d++) link.send(d, go);
    };
    const board = SharingBoard.create(n);
    const tsx = tsxLocation(process.execArgv);
    for (let d = 1; d <= n; d++) {
      const workerData: WorkerSetup = { config, domain: d, peers: peers[d]!, board, tsx };
      const worker = new Worker(entry, {
        workerData,
        execArgv: workerExecArgv(),
        transferList: peers[d]!.map(([, port]) => port),
        name: `bobbin domain ${d}`,
      });
      this.workers.push(worker);
      link.connect(d, worker);
      worker.on("error", (error) => {
        link.domainDown(d, error);
        onCrash(error);
      });
      this.exited.push(
        new Promise<void>((resolve) =>
          worker.once("exit", (code) => {
            if (!this.stopped.has(d)) {
              const error = new Error(`domain ${d} (a worker thread) exited unexpectedly with code ${code}`);
              link.domainDown(d, error);
              onCrash(error);
            }
            resolve();
          }),
        ),
      );
    }
  }

  /**
   * Stops every worker; resolves once all threads have exited. A worker that
   * does not stop within the grace period (stuck in a synchronous loop, say)
   * is terminated.
   */
  async shutdown(): Promise<void> {
    const stop: Message = [M.SHUTDOWN];
    for (let d = 1; d <= this.workers.length; d++) {
      this.stopped.add(d);
      this.link.send(d, stop);
    }
    this.link.flush();
    const timer = setTimeout(() => {
      for (const worker of this.workers) void worker.terminate();
    }, this.graceMs);
    await Promise.all(this.exited);
    clearTimeout(timer);
    this.link.close();
  }

  /** Terminates domain `d` now (it did not answer a cancellation); its pending calls fail with `error`. */
  terminate(d: number, error: Error): void {
    if (this.stopped.has(d)) return;
    this.stopped.add(d);
    void this.workers[d - 1]!.terminate();
    this.link.domainDown(d, error);
  }
}
