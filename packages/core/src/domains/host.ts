/**
 * How the kernel of dom0 reaches the other domains: installed on the first
 * `call`/`parallel` of a run (the workers start then), never before, so a run
 * that stays on dom0 loads no worker code.
 */
import type { DomainHost, Kernel } from "../kernel/kernel.js";
import { DomainLink } from "./link.js";
import { DomainPool } from "./pool.js";

/** @internal A domain's host: the kernel's view of the other domains, and the mailbox to them. */
export interface Domains extends DomainHost {
  readonly link: DomainLink;
}

/** @internal Dom0's side: the worker pool it started. */
class Dom0Domains implements Domains {
  readonly link: DomainLink;
  private readonly pool: DomainPool | null;

  constructor(kernel: Kernel) {
    const link = new DomainLink(kernel, kernel.workers);
    this.link = link;
    if (kernel.workers === 0) {
      this.pool = null;
      return;
    }
    const { seed, pollEvery, sliceMs, eventsLocation, workSharing, cancelGraceMs, taskAges } = kernel.setup;
    const pool = new DomainPool(
      link,
      { workers: kernel.workers, seed, pollEvery, sliceMs, events: eventsLocation, workSharing, graceMs: cancelGraceMs, taskAges },
      (error) => kernel.fail(error),
    );
    this.pool = pool;
    link.onUnresponsive = (domain, error) => {
      pool.terminate(domain, error);
      kernel.fail(error);
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

/** @internal The mailbox of the running kernel's domain; on dom0 the first use starts the workers. */
export function domainLink(kernel: Kernel): DomainLink {
  const domains = kernel.domains as Domains | null;
  if (domains !== null) return domains.link;
  const installed = new Dom0Domains(kernel);
  kernel.domains = installed;
  return installed.link;
}
