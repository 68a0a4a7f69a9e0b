/**
 * Dom0's worker domains: started together on the first `call`/`parallel`,
 * wired to each other, and stopped before `run` settles.
 */
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import type { DomainLink } from "./domain-link.js";
import type { Message } from "./wire.js";

/** @internal What a worker needs to become a domain. */
export interface WorkerSetup {
  readonly domain: number;
  readonly workers: number;
  readonly seed: number;
  readonly pollEvery: number;
  readonly sliceMs: number;
  readonly events: { url: string; name: string } | null;
  readonly workSharing: boolean;
  /**
   * One flag per domain, set while that domain is idle: a busy domain checks
   * (and claims) it before sharing, so an idle notice that went stale is ignored.
   */
  readonly idleFlags: SharedArrayBuffer;
  /** Channels to the other workers, by domain. */
  readonly peers: [number, MessagePort][];
}

/**
 * The parent's Node options, less those that only make sense for the main
 * thread's own entry (`-e`, `--input-type`…), which would break the worker's.
 */
function workerExecArgv(): string[] {
  const out: string[] = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (/^(-e|--eval|-p|--print)$/.test(arg)) i++;
    else if (!/^(--input-type|--eval|--print)(=|$)/.test(arg)) out.push(arg);
  }
  return out;
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
    setup: Omit<WorkerSetup, "domain" | "peers" | "idleFlags">,
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
    const idleFlags = new SharedArrayBuffer(4 * (n + 1));
    for (let d = 1; d <= n; d++) {
      const workerData: WorkerSetup = { ...setup, domain: d, peers: peers[d]!, idleFlags };
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
