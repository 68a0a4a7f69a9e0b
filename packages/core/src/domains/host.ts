/**
 * How a domain's kernel reaches the other domains: installed on the first
 * `call`/`parallel` of a run, never before, so a run that stays on dom0 loads
 * no worker code. On dom0 the worker domains are threads (the pool starts
 * then), or, with `run({ simulateDomains: true })`, simulated on dom0's own
 * thread (simulated.ts); a worker installs its side in its entry (worker.ts).
 */
import type { Kernel } from "../kernel/kernel.js";
import type { Task } from "../kernel/task.js";
import type { CallRequest, Domains } from "./contract.js";
import { DomainLink } from "./link.js";
import { DomainPool } from "./pool.js";
import { startRemoteCall } from "./remote-call.js";
import { SimulatedDomains } from "./simulated.js";

/** @internal A domain whose peers are other threads, reached through its mailbox. */
export abstract class ThreadDomains implements Domains {
  constructor(readonly link: DomainLink) {}

  domainOf(): number {
    return this.link.kernel.domain;
  }

  others(): readonly number[] {
    return this.link.others;
  }

  start(domain: number, request: CallRequest): Task<unknown> {
    return startRemoteCall(this.link, domain, request);
  }

  abstract idle(): boolean;
  abstract fatal(error: unknown): boolean;
  abstract shutdown(): Promise<void>;
}

/** @internal Dom0's side when its worker domains are threads: the pool it started. */
class Dom0Domains extends ThreadDomains {
  private readonly pool: DomainPool | null;

  constructor(kernel: Kernel) {
    const link = new DomainLink(kernel, kernel.workers);
    super(link);
    if (kernel.workers === 0) {
      this.pool = null;
      return;
    }
    const pool = new DomainPool(link, kernel.config, (error) => kernel.life.fail(error));
    this.pool = pool;
    link.onBroken = (domain, error) => {
      pool.terminate(domain, error);
      kernel.life.fail(error);
    };
  }

  idle(): boolean {
    // The loop may now block in its events backend's select: what waits in the outbox goes first.
    this.link.flush();
    return false;
  }

  fatal(): boolean {
    return false;
  }

  shutdown(): Promise<void> {
    return this.pool === null ? Promise.resolve() : this.pool.shutdown();
  }
}

/** @internal The running kernel's other domains; on dom0 the first use installs them (and starts worker threads). */
export function domainsOf(kernel: Kernel): Domains {
  const domains = kernel.domains as Domains | null;
  if (domains !== null) return domains;
  const installed = kernel.config.simulateDomains ? new SimulatedDomains(kernel) : new Dom0Domains(kernel);
  kernel.domains = installed;
  return installed;
}
