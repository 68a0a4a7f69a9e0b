/**
 * The loop's step when the run reports blocking steps: the blocking watch
 * (blocking.ts) hears how long each step ran, which costs two clock reads
 * per step; the flight recorder (recorder.ts), when the run keeps one, takes
 * the first as its clock read for the step's `run`. A run that does not
 * report them steps with `step` itself (loop.ts chooses once per slice),
 * and its loop records each `run`.
 */
import type { BlockingWatch } from "./blocking.js";
import { step } from "./fiber.js";
import type { Host, Recorder, StepWatcher } from "./host.js";
import type { Task } from "./task.js";

/** A step as the loop runs it without a watch: in the task's async context while contexts are in use. */
function stepIn(k: Host, task: Task): void {
  if (k.asyncContexts.inUse) k.asyncContexts.step(task);
  else step(k, task);
}

/** @internal */
export class StepWatch implements StepWatcher {
  constructor(
    private readonly recorder: Recorder | null,
    private readonly blocking: BlockingWatch,
  ) {}

  /** Runs one step of `task` as the loop would (in the task's async context when it has one), timed, and tells the recorder. */
  step(k: Host, task: Task): void {
    const start = performance.now();
    const recorder = this.recorder;
    if (recorder !== null) {
      recorder.clock(start);
      recorder.run(task);
    }
    const flags = task.flags;
    stepIn(k, task);
    this.blocking.stepped(task, flags, performance.now() - start);
  }
}
