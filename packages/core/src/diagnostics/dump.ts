/**
 * `dump`: the task tree of a run as plain data — every task with its uid,
 * name, domain, state, age and what it waits on in words — for a person
 * looking at a live program (see `formatDump`, the `dumpSignal` option) and
 * for `Deadlock` errors. Worker domains answer over the domain link with a
 * snapshot of their own tasks; the subtree a worker runs for a call is shown
 * under the caller's task that stands for the call.
 */

import type { Domains } from "../domains/contract.js";
import type { DomainLink } from "../domains/link.js";
import { runningTask } from "../kernel/current.js";
import type { DomainFlight } from "../kernel/flight.js";
import { type Kernel, runningKernel } from "../kernel/kernel.js";
import type { Dump, TaskDump } from "./dump-data.js";
import { runs } from "./runs.js";
import { type DomainSnapshot, snapshotDomain, type TaskSnapshot } from "./snapshot.js";

/** How long `dump` waits for the other domains' answers. */
const ANSWER_MS = 1000;

/**
 * The task tree of the current run, every domain included, as plain data:
 * each task's uid, name, domain, state, age and what it waits on in words,
 * with its children. Called in a task, the run of that task; outside any
 * task (from a signal handler, a timer), every run in progress on this
 * thread. Worker domains answer over their link (within a second; those
 * that do not are listed in `unanswered`); the tasks a worker runs for a
 * call appear under the caller's task standing for the call. Ages are known
 * only for tasks spawned while the run kept them (`run`'s `taskAges`).
 *
 * @example
 * ```ts
 * process.on("SIGUSR2", () => void B.dump().then((d) => process.stderr.write(B.formatDump(d))));
 * ```
 * @throws never (it resolves; a domain that does not answer is listed in `unanswered`).
 */
export async function dump(): Promise<Dump> {
  const kernels = runningTask() !== null && runningKernel() !== null ? [runningKernel()!] : [...runs];
  const tasks: TaskDump[] = [];
  const unanswered: number[] = [];
  const flight: DomainFlight[] = [];
  for (const kernel of kernels) {
    const link = linkOf(kernel);
    const local = snapshotDomain(kernel, link, []);
    const remote = link === null ? { answers: [], unanswered: [] } : await link.requestSnapshots(ANSWER_MS);
    const graft = grafter([local, ...remote.answers]);
    tasks.push(...local.tasks.map((t) => graft(t, local.domain)));
    unanswered.push(...remote.unanswered);
    for (const d of [local, ...remote.answers]) if (d.flight !== null) flight.push(d.flight);
  }
  return { takenAt: Date.now(), tasks, unanswered, flight };
}

/** @internal This domain's tasks as a dump sees them (synchronous: dom0's part of a `Deadlock` error). */
export function localDump(kernel: Kernel): Dump {
  const local = snapshotDomain(kernel, linkOf(kernel), []);
  const graft = grafter([local]);
  return {
    takenAt: Date.now(),
    tasks: local.tasks.map((t) => graft(t, local.domain)),
    unanswered: [],
    flight: local.flight === null ? [] : [local.flight],
  };
}

/** The mailbox of `kernel`'s domain to the others, once a call installed it. */
function linkOf(kernel: Kernel): DomainLink | null {
  return (kernel.domains as Domains | null)?.link ?? null;
}

/** Turns snapshots into dumps, putting under each call's task the subtree that runs it elsewhere. */
function grafter(domains: readonly DomainSnapshot[]): (task: TaskSnapshot, domain: number) => TaskDump {
  const byUid = new Map<string, TaskSnapshot>();
  const servers = new Map<string, string>();
  const index = (d: number, t: TaskSnapshot): void => {
    byUid.set(`${d}:${t.uid}`, t);
    for (const c of t.children) index(d, c);
  };
  for (const d of domains) {
    for (const t of d.tasks) index(d.domain, t);
    for (const s of d.serving) servers.set(`${s.from}:${s.id}`, `${d.domain}:${s.uid}`);
  }
  const graft = (t: TaskSnapshot, domain: number, depth: number): TaskDump => {
    const children = t.children.map((c) => graft(c, domain, depth + 1));
    const remote = t.call === undefined || depth > 64 ? undefined : servers.get(`${domain}:${t.call}`);
    const body = remote === undefined ? undefined : byUid.get(remote);
    if (body !== undefined) children.push(graft(body, body.domain, depth + 1));
    const { call: _, ...dumped } = t;
    return { ...dumped, children };
  };
  return (task, domain) => graft(task, domain, 0);
}
