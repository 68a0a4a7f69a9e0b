/**
 * Stepping a fiber: one step resumes a task's generator until it returns,
 * throws, parks (`SUSPEND`) or yields (`YIELD`). No Promise or microtask is
 * involved per step.
 */
import { describe } from "../describe.js";
import { type Instruction, SUSPEND, SUSPENDED, YIELD, YIELDED } from "../operation.js";
import { broken } from "./assert.js";
import { beforeCancelledStep, deliverCancel } from "./cancellation.js";
import { bodyEnded, endUnborn } from "./ending.js";
import { trace } from "./guards.js";
import type { Host } from "./host.js";
import { registerBody } from "./names.js";
import { Kind } from "./recorder.js";
import { toFailedStep, toRunning, toStarted, toYielded } from "./state.js";
import { F, type Task } from "./task.js";

type Fiber = Generator<Instruction, unknown, unknown>;
type Body = (...args: unknown[]) => Fiber;

/**
 * The generators' own `next` and `throw`. Every task body has its own
 * generator prototype, so `gen.next` would be a megamorphic property load at
 * this one call site. Bound to `call`, the two are functions the compiler
 * knows, and a step calls the generators' builtin directly. (Since the build
 * keeps module-level `const`, `generatorNext.call(gen, v)` measures the same;
 * in a bundle that writes them as `var`, it took the generic call path.)
 */
const generatorPrototype = Object.getPrototypeOf(Object.getPrototypeOf((function* () {})())) as Fiber;
const generatorNext = generatorPrototype.next;
const resumeNext = Function.prototype.call.bind(generatorNext) as (gen: Fiber, value: unknown) => IteratorResult<Instruction, unknown>;
const resumeThrow = Function.prototype.call.bind(generatorPrototype.throw) as (
  gen: Fiber,
  error: unknown,
) => IteratorResult<Instruction, unknown>;

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

/** @internal Whether a step of a task with these flags only resumes it: started, with no cancellation to settle. */
export function onlyResumes(flags: number): boolean {
  return (flags & (F.STARTED | F.CANCEL_REQUESTED | F.CANCEL_DELIVERED)) === F.STARTED;
}

/** @internal Runs one step of `task`, which the loop took from the ready queue. */
export function step(k: Host, task: Task): void {
  let flags = task.flags;
  if (!onlyResumes(flags)) flags = firstOrCancelledStep(k, task, flags);
  if (flags >= 0) resume(k, task, flags);
}

/** @internal A step's resumption of the generator (after `firstOrCancelledStep` unless it `onlyResumes`): until it returns, throws, parks or yields. */
export function resume(k: Host, task: Task, flags: number): void {
  toRunning(task, flags);
  const gen = task.gen as Fiber;
  k.current = task;
  let r: IteratorResult<Instruction, unknown>;
  try {
    r = (flags & F.THROW) !== 0 ? resumeThrow(gen, task.value) : resumeNext(gen, task.value);
  } catch (error) {
    k.current = null;
    bodyEnded(k, task, false, error);
    return;
  }
  k.current = null;
  // An operation's own result comes back as it is (`yield*` passes it on):
  // the shared results of yielding and parking tell the step at once, without
  // reading a result whose shape depends on what made it.
  if (r === YIELDED) yielded(k, task);
  else if (r === SUSPENDED) afterSuspend(k, task);
  else if (r.done === true) bodyEnded(k, task, true, r.value);
  else if (r.value === YIELD) yielded(k, task);
  else if (r.value === SUSPEND) afterSuspend(k, task);
  else badInstruction(k, task, r.value);
}

/** The fiber yielded: it goes to the back of the ready queue. */
function yielded(k: Host, task: Task): void {
  // Queued already only if an operation broke the protocol (it woke its own task): queued once.
  if ((task.flags & F.QUEUED) === 0) {
    toYielded(task);
    k.ready.push(task);
  }
}

/**
 * @internal A step that first starts the fiber, or settles a pending
 * cancellation. Returns the flags the step resumes it with, or -1 when the
 * task ended instead (cancelled before it ever ran: its body never starts).
 */
export function firstOrCancelledStep(k: Host, task: Task, flags: number): number {
  if ((flags & F.STARTED) === 0) {
    if ((flags & (F.CANCEL_REQUESTED | F.NO_EARLY_CANCEL)) === F.CANCEL_REQUESTED) {
      endUnborn(k, task);
      return -1;
    }
    flags = toStarted(task, birth(task, flags));
    if (k.tracer !== null) trace(k, "start", task);
  }
  if ((flags & (F.CANCEL_REQUESTED | F.CANCEL_DELIVERED)) !== 0) flags = beforeCancelledStep(task, flags);
  return flags;
}

/**
 * Makes an unborn task's generator from the body and arguments its record
 * holds (a body that is not a generator function made its generator at spawn).
 */
function birth(task: Task, flags: number): Task["gen"] {
  if (typeof task.gen !== "function") return task.gen;
  const body = task.gen as Body;
  const args = task.value;
  registerBody(body);
  // A body without arguments is called through `call`: at a direct call the compiler keeps the
  // function it saw there, and the root's body is often a closure made for its run (`run(function*
  // () { … })`), so the collection of a run's body threw away the loop's compiled step.
  return (flags & F.ONE_ARG) !== 0 ? body(args) : (flags & F.ARGS) !== 0 ? body(...(args as unknown[])) : body.call(undefined);
}

/** The fiber parked: deliver a cancellation that arrived while it ran with an operation's result. */
function afterSuspend(k: Host, task: Task): void {
  const flags = task.flags;
  if ((flags & F.PARKED) === 0) {
    if (__BOBBIN_DEV__ && (flags & F.QUEUED) === 0) broken(task, "suspended without parking");
    return; // parked and woken within the same step
  }
  const r = k.recorder;
  if (r !== null) {
    const i = r.next;
    r.codes[i] = task.uid * Kind.Kinds + Kind.Park;
    r.refs[i] = task.value; // the waiter (parked)
    if (++r.next === r.capacity) r.wrapped();
  }
  if (k.tracer !== null) trace(k, "suspend", task);
  if ((flags & (F.CANCEL_REQUESTED | F.CANCEL_DELIVERED)) === F.CANCEL_REQUESTED) deliverCancel(k, task);
}

/** It yielded something that is not an instruction: the step throws a TypeError where it yielded. */
function badInstruction(k: Host, task: Task, instruction: unknown): void {
  toFailedStep(
    task,
    new TypeError(
      `${task} yielded ${describe(instruction)} to the scheduler: use \`yield*\` on operations ` +
        "(yield* B.yieldNow(), yield* B.awaitExn(t)), never a bare `yield`",
    ),
  );
  k.ready.push(task);
}
