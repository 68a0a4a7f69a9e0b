/**
 * The runs in progress on this thread, by kernel: watched for deadlocks
 * from their start until they settle (deadlock/drain.ts), and dumped by
 * `B.dump()` when it is called outside any task.
 */
import type { Kernel } from "../kernel/kernel.js";

/** @internal The kernels of this thread whose run has started and not settled. */
export const runs = new Set<Kernel>();
