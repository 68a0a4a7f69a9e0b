/**
 * The loop's step when the run watches its steps: the flight recorder
 * (recorder.ts) hears each step begin and each slice end, the blocking watch
 * (blocking.ts) how long each step ran. A run that does neither steps with
 * `step` itself (loop.ts chooses once per slice).
 */
import type { BlockingWatch } from "./blocking.js";
import { step } from "./fiber.js";
import type { Host } from "./host.js";
import type { FlightRecorder } from "./recorder.js";
import type { Task } from "./task.js";

/** @internal */
export class StepWatch {
  constructor(
    private readonly recorder: FlightRecorder | null,
    private readonly blocking: BlockingWatch | null,
  ) {}

  /** Runs one step of `task`, as `step` does, and tells the recorder and the blocking watch. */
  step(k: Host, task: Task): void {
    const start = performance.now();
    this.recorder?.run(task, start);
    const blocking = this.blocking;
    if (blocking === null) {
      step(k, task);
      return;
    }
    const flags = task.flags;
    step(k, task);
    blocking.stepped(task, flags, performance.now() - start);
  }

  /** A slice of the loop ended. */
  sliceEnded(): void {
    this.recorder?.idle();
  }
}
