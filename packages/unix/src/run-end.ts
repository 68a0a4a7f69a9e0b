/**
 * The end of a run of `@bobbin/unix` on dom0's backend, once its task tree
 * is over: its signal handlers go, its processes are drained, then the
 * backend's handles. Every step runs whatever the others did, and the end
 * settles in bounded time with what each step threw, so that `run` settles
 * and loses none of them.
 */
import * as B from "@bobbin/core";
import { runDefaults } from "@bobbin/core/lowlevel";
import type { Backend } from "./contract.js";
import { DrainTimeout } from "./errors.js";
import { backendName } from "./from-backend.js";
import { drainProcesses } from "./process.js";
import type { SignalTable } from "./signals.js";

/**
 * @internal Ends the run on `backend`; resolves (never rejects) with the
 * errors of the steps that failed, in order. `graceMs` (the run's
 * `cancelGraceMs`, core's default when it gives none) bounds the backend's `drain()`.
 */
export async function endRun(backend: Backend, signals: SignalTable, graceMs: number | undefined): Promise<unknown[]> {
  const errors: unknown[] = [];
  const signalsGone = attempt(() => signals.dispose(), errors);
  await attempt(() => drainProcesses(backend), errors);
  await attempt(() => drainWithin(backend, graceMs ?? runDefaults.cancelGraceMs), errors);
  await signalsGone;
  return errors;
}

/**
 * @internal What `run` rejects with when its end failed: `ending`'s errors,
 * after the run's own `error` if it failed — one error as itself, several
 * as core's `Failures`.
 */
export function failureWith(ending: readonly unknown[], ...error: [] | [unknown]): unknown {
  const errors = [...error, ...ending];
  return errors.length === 1 ? errors[0] : new B.Failures(errors);
}

/** Runs `step`, a synchronous throw or a rejection alike going to `errors`. */
function attempt(step: () => Promise<void>, errors: unknown[]): Promise<void> {
  return Promise.resolve()
    .then(step)
    .catch((error: unknown) => {
      errors.push(error);
    });
}

/**
 * The backend's drain, or a `DrainTimeout` once `graceMs` have passed; the
 * timer goes as soon as either comes, and a drain that settles later (or
 * rejects) is ignored then.
 */
function drainWithin(backend: Backend, graceMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new DrainTimeout(backendName(backend), graceMs)), graceMs);
    Promise.resolve()
      .then(() => backend.drain())
      .then(resolve, reject)
      .finally(() => clearTimeout(timer));
  });
}
