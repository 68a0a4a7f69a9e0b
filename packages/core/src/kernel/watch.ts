/**
 * The loop's step when the run watches its steps: the flight recorder
 * (recorder.ts) hears each step begin, each slice end and each read of the
 * loop's clock; the blocking watch (blocking.ts) how long each step ran,
 * which costs two clock reads per step (the recorder then takes its times
 * from them). A run that does neither steps with `step` itself (loop.ts
 * chooses once per slice).
 */
import type { BlockingWatch } from "./blocking.js";
import { step } from "./fiber.js";
import type { Host, StepWatcher } from "./host.js";
import type { FlightRecorder } from "./recorder.js";
import type { Task } from "./task.js";

/** A step as the loop runs it without a watch: in the task's async context while contexts are in use. */
function stepIn(k: Host, task: Task): void {
  if (k.asyncContexts.inUse) k.asyncContexts.step(task);
  else step(k, task);
}

/** @internal */
export class StepWatch implements StepWatcher {
  constructor(
    private readonly recorder: FlightRecorder | null,
    private readonly blocking: BlockingWatch | null,
  ) {}

  /** Runs one step of `task` as the loop would (in the task's async context when it has one), and tells the recorder and the blocking watch. */
  step(k: Host, task: Task): void {
    const blocking = this.blocking;
    if (blocking === null) {
      this.recorder!.run(task);
      stepIn(k, task);
      return;
    }
    const start = performance.now();
    this.recorder?.clock(start);
    this.recorder?.run(task);
    const flags = task.flags;
    stepIn(k, task);
    blocking.stepped(task, flags, performance.now() - start);
  }

  /** The loop read its clock: `now`. */
  clock(now: number): void {
    this.recorder?.clock(now);
  }

  /** A slice of the loop ended. */
  sliceEnded(): void {
    this.recorder?.idle();
  }
}
