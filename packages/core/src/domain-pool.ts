/**
 * Dom0's worker domains: started together on the first `call`/`parallel`,
 * wired to each other, and stopped before `run` settles.
 */
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import type { DomainLink } from "./domain-link.js";
import type { Message } from "./wire.js";
import { SharingBoard } from "./work-sharing.js";

/** @internal What a worker needs to become a domain. */
export interface WorkerSetup {
  readonly domain: number;
  readonly workers: number;
  readonly seed: number;
  readonly pollEvery: number;
  readonly sliceMs: number;
  readonly events: { url: string; name: string } | null;
  readonly workSharing: boolean;
  /** The work-sharing board (see work-sharing.ts). */
  readonly board: SharedArrayBuffer;
  /** Channels to the other workers, by domain. */
  readonly peers: [number, MessagePort][];
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

/** How long a stopping worker may take before it is terminated. */
const SHUTDOWN_GRACE_MS = 5000;

/** @internal */
export class DomainPool {
  private readonly workers: Worker[] = [];
  private readonly exited: Promise<void>[] = [];
  private stopping = false;

  constructor(
    private readonly link: DomainLink,
    setup: Omit<WorkerSetup, "domain" | "peers" | "board">,
    onCrash: (error: Error) => void,
  ) {
    const n = setup.workers;
    const peers: [number, MessagePort][][] = Array.from({ length: n + 1 }, () => []);
    for (let i = 1; i <= n; i++) {
      for (let j = i + 1; j <= n; j++) {
        const { port1, port2 } = new MessageChannel();
        peers[i]!.push([j, port1]);
        peers[j]!.push([i, port2]);
      }
    }
    const entry = new URL("./worker.js", import.meta.url);
    const board = SharingBoard.create(n);
    for (let d = 1; d <= n; d++) {
      const workerData: WorkerSetup = { ...setup, domain: d, peers: peers[d]!, board };
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
            if (!this.stopping) {
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

  /** Stops every worker; resolves once all threads have exited. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    const stop: Message = { kind: "shutdown" };
    for (const worker of this.workers) worker.postMessage(stop);
    const timer = setTimeout(() => {
      for (const worker of this.workers) void worker.terminate();
    }, SHUTDOWN_GRACE_MS);
    await Promise.all(this.exited);
    clearTimeout(timer);
    this.link.close();
  }
}
