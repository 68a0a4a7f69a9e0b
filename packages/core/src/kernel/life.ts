/**
 * The life of a run in one domain: its root task and system tasks, how it
 * fails, and how it settles. A run is over here once the root and every
 * system task have ended (or the kernel failed, or a deadlock that
 * cancelling could not break was abandoned); it then stops the events
 * backend and the other domains, and settles with the root's value or with
 * every failure, none lost.
 */
import { CallbackFailed, failureOf, InternalError } from "../errors.js";
import { broken } from "./assert.js";
import { requestCancel } from "./cancellation.js";
import type { Host, HostLife } from "./host.js";
import { sameFailure } from "./origin.js";
import { keepKernel } from "./shapes.js";
import { isPending, outcomeOf, stateOf } from "./state.js";
import { State, Task } from "./task.js";

/** @internal How a run ended, reported to `run`'s promise. */
export type Settle = (ok: boolean, value: unknown) => void;

/** @internal See the file comment. */
export class RunLife implements HostLife {
  /** Whether the run is over here (the root ended, or the kernel failed). */
  done = false;
  private root: Task | null = null;
  /** System tasks not ended yet (`spawnSystem`): beside the root, cancelled once it has ended. */
  private system: Set<Task> | null = null;
  private settle: Settle | null = null;
  /**
   * The errors the run fails with, in the order they happened: the first
   * cancelled the root; the others (a cleanup that failed meanwhile, a system
   * task, the root's own error) must not be lost either.
   */
  private readonly failures: unknown[] = [];

  constructor(private readonly k: Host) {}

  /** The tasks without a parent: the root, then the system tasks not ended yet (for diagnostics). */
  topTasks(): Task[] {
    const root = this.root;
    const tops = root === null ? [] : [root];
    if (this.system !== null) tops.push(...this.system);
    return tops;
  }

  /** Starts the root task (its body, or its generator already made); `settle` hears how the run ended. */
  start(gen: Task["gen"], settle: Settle): Task {
    const k = this.k;
    const root = new Task(k.nextUid(), null, gen, 0, undefined);
    this.root = root;
    this.settle = settle;
    k.adoptTop(root);
    k.loop.schedule();
    return root;
  }

  /**
   * Starts a system task (`spawnSystem`): parentless, beside the root. Its
   * failure fails the run; once the root has ended it is cancelled, and the
   * run ends with the last of them.
   */
  startSystem(gen: Task["gen"]): Task {
    const k = this.k;
    const task = new Task(k.nextUid(), null, gen, 0, undefined);
    (this.system ??= new Set()).add(task);
    k.adoptTop(task);
    if (this.root === null || !isPending(this.root)) requestCancel(k, task);
    k.loop.schedule();
    return task;
  }

  /** Whether the run has failed: its tasks are being cancelled, or have been. */
  get failing(): boolean {
    return this.failures.length !== 0;
  }

  /**
   * A broken rule, an aborted `signal`, a deadlock: the whole run is
   * cancelled and fails with `error` (and with the errors that follow it).
   */
  fail(error: unknown): void {
    const first = this.failures.length === 0;
    // Once the run is over here, only a first failure can still decide it:
    // what comes later is a worker's copy of a failure it reported already.
    if ((this.done && !first) || !this.record(error)) return;
    if (this.k.domains?.fatal(error)) return;
    if (!first) return;
    if (this.root !== null) requestCancel(this.k, this.root);
    this.k.loop.schedule();
  }

  /** Adds `error` to the run's failures; false when it (or a copy of it) is there already. */
  private record(error: unknown): boolean {
    if (this.failures.some((known) => sameFailure(known, error))) return false;
    this.failures.push(error);
    return true;
  }

  /**
   * A run that failed with `error` (a deadlock; a runtime's `L.abandon`) but
   * whose tasks cannot end: cancelling them did not break their wait (one
   * that cannot be interrupted twice). Settle it now, leaving them, rather
   * than never.
   */
  abandon(error: unknown): void {
    if (this.settle === null || this.done) return;
    this.record(error);
    this.done = true;
    this.finish();
  }

  /**
   * Code the kernel called but does not own threw `error`: the run fails
   * naming `source` (once: a source that keeps failing, as a policy asked at
   * every step may, is the same bug).
   */
  callbackFailed(source: string, error: unknown): void {
    if (!this.failedAlready(source)) this.fail(new CallbackFailed(source, error));
  }

  /** As `callbackFailed`, once the run is over here (the root ended): the error joins the run's failures. */
  callbackFailedAtEnd(source: string, error: unknown): void {
    if (!this.failedAlready(source)) this.failures.push(new CallbackFailed(source, error));
  }

  private failedAlready(source: string): boolean {
    return this.failures.some((f) => f instanceof CallbackFailed && f.source === source);
  }

  /** The kernel itself failed: settle the run now rather than leave it hanging. */
  internalError(error: unknown): void {
    if (this.settle === null) return;
    const flight = this.k.flight();
    if (flight !== null) this.record(new InternalError(error instanceof InternalError ? error.cause : error, flight));
    else this.record(error instanceof InternalError ? error : new InternalError(error));
    this.done = true;
    this.finish();
  }

  /**
   * A task without a parent ended: a system task, or the root. The run is
   * over here once the root and every system task have ended.
   */
  topEnded(task: Task): void {
    const system = this.system;
    const root = this.root;
    if (root === null) return; // the run settled already (it abandoned this task, a deadlock's)
    if (task !== root) {
      system!.delete(task);
      if (stateOf(task) === State.Failed) this.fail(outcomeOf(task));
      if (!isPending(root) && system!.size === 0) this.rootEnded();
      return;
    }
    // Recorded now: the system tasks' cleanup, which comes next, may fail too.
    const state = stateOf(root);
    if (state === State.Failed || (state === State.Cancelled && this.failures.length === 0)) this.record(outcomeOf(root));
    if (system !== null && system.size !== 0) {
      for (const t of system) requestCancel(this.k, t);
    } else this.rootEnded();
  }

  /** The root task ended, and no system task is left: the run is over here. */
  private rootEnded(): void {
    if (__BOBBIN_DEV__ && this.k.liveTasks !== 0) broken(this.k, `ends its run with ${this.k.liveTasks} task(s) not ended`);
    this.done = true;
    this.finish();
  }

  /** Stops the backend and the other domains, then settles the run. */
  private finish(): void {
    const k = this.k;
    k.driver?.finish();
    const settle = this.settle!;
    this.settle = null;
    const failures = this.failures;
    const root = this.root!;
    const report = (): void => (failures.length === 0 ? settle(true, outcomeOf(root)) : settle(false, failureOf(failures)));
    if (k.domains === null) report();
    else k.domains.shutdown().then(report, report);
    // The kernel outlives its run (see shapes.ts): it lets go of the root and its value.
    this.root = null;
    keepKernel(k);
  }
}
