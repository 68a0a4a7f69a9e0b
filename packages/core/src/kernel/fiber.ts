/**
 * Stepping a fiber: one step resumes a task's generator until it returns,
 * throws, parks (`SUSPEND`) or yields (`YIELD`). No Promise or microtask is
 * involved per step.
 */
import { describe } from "../describe.js";
import { type Instruction, RESUMED, SUSPEND, YIELD } from "../operation.js";
import { invariant } from "./assert.js";
import { beforeCancelledStep, deliverCancel } from "./cancellation.js";
import { setCurrent } from "./current.js";
import { bodyEnded, endUnborn } from "./ending.js";
import type { Kernel } from "./kernel.js";
import { registerBody } from "./names.js";
import { F, type Task } from "./task.js";

type Fiber = Generator<Instruction, unknown, unknown>;
type Body = (...args: unknown[]) => Fiber;

/**
 * The generators' own `next` and `throw`, called with `.call`: every task
 * body has its own generator prototype, so `gen.next` would be a megamorphic
 * property load at this one call site; a known function is a direct call.
 */
const generatorPrototype = Object.getPrototypeOf(Object.getPrototypeOf((function* () {})())) as Fiber;
const generatorNext = generatorPrototype.next;
const generatorThrow = generatorPrototype.throw;

function* delegate(iterator: Fiber): Fiber {
  return yield* iterator;
}

/**
 * @internal `gen` itself when it is a generator, otherwise a generator
 * delegating to it (a body may return any iterator with `next` and `throw`;
 * the step calls the generators' own `next`).
 */
export function asGenerator(gen: Fiber): Fiber {
  return gen.next === generatorNext ? gen : delegate(gen);
}

/** @internal Runs one step of `task`, which the loop took from the ready queue. */
export function step(k: Kernel, task: Task): void {
  const flags = task.flags;
  // The hot path: a started task with no cancellation to settle.
  if ((flags & (F.STARTED | F.CANCEL_REQUESTED | F.CANCEL_DELIVERED)) === F.STARTED) {
    resumeFiber(k, task, task.gen as Fiber, flags);
    return;
  }
  firstOrCancelledStep(k, task, flags);
}

/** A step that first starts the fiber, or settles a pending cancellation. */
function firstOrCancelledStep(k: Kernel, task: Task, flags: number): void {
  if ((flags & F.STARTED) === 0) {
    if ((flags & (F.CANCEL_REQUESTED | F.NO_EARLY_CANCEL)) === F.CANCEL_REQUESTED) {
      // Cancelled before it ever ran: its body never starts.
      task.flags = flags & ~(F.QUEUED | F.ONE_ARG | F.ARGS);
      endUnborn(k, task);
      return;
    }
    birth(task, flags);
    flags = (task.flags | F.STARTED) & ~(F.ONE_ARG | F.ARGS);
    task.value = RESUMED;
    if (k.tracer !== null) k.trace("start", task);
  }
  if ((flags & (F.CANCEL_REQUESTED | F.CANCEL_DELIVERED)) !== 0) flags = beforeCancelledStep(task, flags);
  resumeFiber(k, task, task.gen as Fiber, flags);
}

/**
 * Makes an unborn task's generator from the body and arguments its record
 * holds (a body that is not a generator function made its generator at spawn).
 */
function birth(task: Task, flags: number): void {
  if (typeof task.gen !== "function") return;
  const body = task.gen as Body;
  const args = task.value;
  registerBody(body);
  task.gen = (flags & F.ONE_ARG) !== 0 ? body(args) : (flags & F.ARGS) !== 0 ? body(...(args as unknown[])) : body();
}

function resumeFiber(k: Kernel, task: Task, gen: Fiber, flags: number): void {
  task.flags = flags & ~(F.QUEUED | F.YIELDED | F.THROW);
  setCurrent(task);
  let r: IteratorResult<Instruction, unknown>;
  try {
    r = (flags & F.THROW) !== 0 ? generatorThrow.call(gen, task.value) : generatorNext.call(gen, task.value);
  } catch (error) {
    setCurrent(null);
    bodyEnded(k, task, false, error);
    return;
  }
  setCurrent(null);
  if (r.done === true) {
    bodyEnded(k, task, true, r.value);
    return;
  }
  const instruction = r.value;
  if (instruction === YIELD) {
    const after = task.flags;
    if ((after & F.QUEUED) === 0) {
      task.flags = after | F.YIELDED | F.QUEUED;
      task.value = RESUMED;
      k.ready.push(task);
    }
  } else if (instruction === SUSPEND) afterSuspend(k, task);
  else badInstruction(k, task, instruction);
}

/** The fiber parked: deliver a cancellation that arrived while it ran with an operation's result. */
function afterSuspend(k: Kernel, task: Task): void {
  const flags = task.flags;
  if ((flags & F.PARKED) === 0) {
    if (__BOBBIN_DEV__) invariant((flags & F.QUEUED) !== 0, `${task} suspended without parking`);
    return; // parked and woken within the same step
  }
  if (k.tracer !== null) k.trace("suspend", task);
  if ((flags & (F.CANCEL_REQUESTED | F.CANCEL_DELIVERED)) === F.CANCEL_REQUESTED) deliverCancel(k, task);
}

function badInstruction(k: Kernel, task: Task, instruction: unknown): void {
  k.requeueWithError(
    task,
    new TypeError(
      `${task} yielded ${describe(instruction)} to the scheduler: use \`yield*\` on operations ` +
        "(yield* B.yieldNow(), yield* B.awaitExn(t)), never a bare `yield`",
    ),
  );
}
