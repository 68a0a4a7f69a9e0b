/**
 * What domains say to each other. Messages travel over MessagePorts between
 * worker threads, so everything in them is structured-cloned: they are small
 * arrays (see `M`); errors are encoded by hand so that they keep their class,
 * name and cause.
 */
import type { DomainSnapshot } from "../diagnostics/dump.js";
import * as errors from "../errors.js";
import { registeredClass, registeredClassOf } from "./error-classes.js";
import { decodeOne, isPortableDefined, PORTABLE_KEY, portableOf } from "./portable.js";

/** @internal An error as it crosses a thread. */
export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly stack: string | undefined;
  readonly props: Record<string, unknown>;
  /** An error that a portable encodes (see `definePortable`): decoded by it in the receiving domain. */
  readonly portable?: { readonly name: string; readonly data: unknown; readonly module?: string };
  /** Its class, when registered with `defineError`: rebuilt with it in the receiving domain. */
  readonly class?: { readonly key: string; readonly module: string };
  /** Its `cause`: an error, encoded in turn, or a value. */
  readonly cause?: { readonly error: WireError } | { readonly value: unknown };
}

/**
 * @internal What kind of message a domain received: the first element of
 * every message. Messages are small arrays rather than objects: structured
 * clone writes an object's keys into every message and reads them back, an
 * array of numbers is only its elements (and a typed array costs more than
 * either for a handful of numbers: its buffer is allocated on both sides).
 */
export const M = {
  /** `[CALL, id, from, flags, url, name, args]`: run `name` of module `url` for domain `from`; its reply is keyed by `id`. */
  CALL: 0,
  /** `[CANCEL, id, from]`: the caller cancelled call `id`. */
  CANCEL: 1,
  /** `[RETURNED, id, value]`: call `id` of this domain ended with its whole subtree, returning `value`. */
  RETURNED: 2,
  /** `[RETURNED_PORTABLE, id, value]`: the same, `value` holding encoded portables (see portable.ts). */
  RETURNED_PORTABLE: 3,
  /** `[FAILED, id, error]`: call `id` ended with its whole subtree, failing. */
  FAILED: 4,
  /** `[FATAL, error]`: a rule was broken in a worker: the run fails. */
  FATAL: 5,
  /** `[IDLE, from]`: a worker has nothing to run (work sharing). */
  IDLE: 6,
  /** `[SHUTDOWN]`: dom0 tells a worker to stop: the run is over. */
  SHUTDOWN: 7,
  /** `[READY, from]`: a worker has started (worker → dom0). */
  READY: 8,
  /** `[GO]`: every worker has started: start serving calls (dom0 → workers). */
  GO: 9,
  /** `[DUMP, id, from]`: domain `from` takes a dump: send it a snapshot of this domain's tasks, keyed by `id`. */
  DUMP: 10,
  /** `[SNAPSHOT, id, snapshot]`: the answer to a `DUMP`. */
  SNAPSHOT: 11,
  /** `[BATCH, messages]`: several messages, in order, posted together (see link.ts). */
  BATCH: 12,
} as const;

/** @internal The `flags` of a call message. */
export const CALL_PINNED = 1;
/** @internal The call's `args` hold encoded portables (see portable.ts). */
export const CALL_PORTABLE = 2;

/** @internal */
export type CallMessage = readonly [
  kind: typeof M.CALL,
  id: number,
  from: number,
  flags: number,
  url: string,
  name: string,
  args: unknown[],
];

/** @internal */
export type Message =
  | CallMessage
  | readonly [kind: typeof M.CANCEL, id: number, from: number]
  | readonly [kind: typeof M.RETURNED | typeof M.RETURNED_PORTABLE, id: number, value: unknown]
  | readonly [kind: typeof M.FAILED, id: number, error: WireError]
  | readonly [kind: typeof M.FATAL, error: WireError]
  | readonly [kind: typeof M.IDLE | typeof M.READY, from: number]
  | readonly [kind: typeof M.SHUTDOWN | typeof M.GO]
  | readonly [kind: typeof M.DUMP, id: number, from: number]
  | readonly [kind: typeof M.SNAPSHOT, id: number, snapshot: DomainSnapshot]
  | readonly [kind: typeof M.BATCH, messages: Message[]];

/** @internal A call as the domain that runs it (or shares it) holds it, read from its message. */
export interface Call {
  readonly id: number;
  /** The caller's domain, which the result goes back to. */
  readonly from: number;
  readonly url: string;
  readonly name: string;
  readonly args: unknown[];
  /** Pinned to its domain: never shared. */
  readonly pinned: boolean;
  /** `args` hold encoded portables. */
  readonly portable: boolean;
}

/** @internal The message that sends `call`. */
export function callMessage(call: Call): CallMessage {
  const flags = (call.pinned ? CALL_PINNED : 0) | (call.portable ? CALL_PORTABLE : 0);
  return [M.CALL, call.id, call.from, flags, call.url, call.name, call.args];
}

/** @internal The call a call message sends. */
export function readCall(message: CallMessage): Call {
  const [, id, from, flags, url, name, args] = message;
  return { id, from, url, name, args, pinned: (flags & CALL_PINNED) !== 0, portable: (flags & CALL_PORTABLE) !== 0 };
}

/** @internal The message that fails call `id` with `error`. */
export function failedMessage(id: number, error: unknown): Message {
  return [M.FAILED, id, encodeError(error)];
}

const KNOWN: Record<string, new (...args: never[]) => Error> = {
  BobbinError: errors.BobbinError,
  Cancelled: errors.Cancelled,
  StillHasChildren: errors.StillHasChildren,
  NotAChild: errors.NotAChild,
  NoDomainAvailable: errors.NoDomainAvailable,
  ResourceLeaked: errors.ResourceLeaked,
  NotOwner: errors.NotOwner,
  NoSelectProvided: errors.NoSelectProvided,
  Deadlock: errors.Deadlock,
  Uncloneable: errors.Uncloneable,
  CallbackFailed: errors.CallbackFailed,
  InternalError: errors.InternalError,
  EventOverflow: errors.EventOverflow,
  DomainUnresponsive: errors.DomainUnresponsive,
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
  AggregateError,
};

/** How deep a chain of causes crosses. */
const MAX_CAUSES = 8;

/** @internal */
export function encodeError(error: unknown, depth = 0): WireError {
  if (!(error instanceof Error)) {
    return {
      name: "Error",
      message: `non-Error value thrown: ${safeString(error)}`,
      stack: undefined,
      props: { thrown: cloneable(error) },
    };
  }
  const props: Record<string, unknown> = {};
  for (const key of Object.keys(error)) {
    const v = (error as unknown as Record<string, unknown>)[key];
    if (isCloneable(v)) props[key] = v;
  }
  let wire: WireError = { name: error.name, message: error.message, stack: error.stack, props };
  try {
    const m = portableOf(error);
    if (m !== null)
      wire = { ...wire, portable: { name: m[PORTABLE_KEY], data: m.data, ...(m.module === undefined ? {} : { module: m.module }) } };
  } catch {
    // a failing encode: the error crosses without it
  }
  const registered = registeredClassOf(error);
  if (registered !== null) wire = { ...wire, class: registered };
  if (Object.hasOwn(error, "cause") && depth < MAX_CAUSES) {
    const cause: unknown = error.cause;
    wire = { ...wire, cause: cause instanceof Error ? { error: encodeError(cause, depth + 1) } : { value: cloneable(cause) } };
  }
  return wire;
}

/**
 * @internal The error again: made by its portable when one encoded it,
 * otherwise of its class when registered here (`defineError`) or when
 * Bobbin or JavaScript defines it, otherwise a plain `Error` with its name.
 */
export function decodeError(wire: WireError): Error {
  if (wire.portable !== undefined) {
    try {
      const error = decodeOne(wire.portable.name, wire.portable.data);
      if (error instanceof Error) return error;
    } catch {
      // unknown here, or a failing decode: rebuilt as a plain error below
    }
  }
  const Class = (wire.class === undefined ? undefined : registeredClass(wire.class.key)) ?? KNOWN[wire.name] ?? Error;
  const error = Object.create(Class.prototype) as Error;
  Object.defineProperty(error, "message", { value: wire.message, writable: true, configurable: true });
  Object.defineProperty(error, "stack", { value: wire.stack, writable: true, configurable: true });
  if (error.name !== wire.name) Object.defineProperty(error, "name", { value: wire.name, writable: true, configurable: true });
  Object.assign(error, wire.props);
  if (wire.cause !== undefined) {
    const cause = "error" in wire.cause ? decodeError(wire.cause.error) : wire.cause.value;
    Object.defineProperty(error, "cause", { value: cause, writable: true, configurable: true });
  }
  return error;
}

/**
 * @internal The modules this domain must import before it decodes `wire`
 * with every class and portable it names (those defined with a module URL).
 */
export function errorModules(wire: WireError): string[] {
  const modules = new Set<string>();
  for (let w: WireError | undefined = wire; w !== undefined; w = w.cause !== undefined && "error" in w.cause ? w.cause.error : undefined) {
    if (w.portable?.module !== undefined && !isPortableDefined(w.portable.name)) modules.add(w.portable.module);
    if (w.class !== undefined && registeredClass(w.class.key) === undefined) modules.add(w.class.module);
  }
  return [...modules];
}

function isCloneable(value: unknown): boolean {
  try {
    structuredClone(value);
    return true;
  } catch {
    return false;
  }
}

function cloneable(value: unknown): unknown {
  return isCloneable(value) ? value : safeString(value);
}

function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/**
 * @internal When postMessage refused a message, finds which value could not
 * be cloned, for an error that names it.
 */
function uncloneablePart(values: readonly unknown[], label: (i: number) => string): string {
  for (let i = 0; i < values.length; i++) if (!isCloneable(values[i])) return label(i);
  return "a value";
}

/** @internal The error of a call to `name` whose arguments could not be cloned (`error` is the cloning's). */
export function uncloneableArguments(name: string, args: readonly unknown[], error: unknown): errors.Uncloneable {
  return new errors.Uncloneable(
    uncloneablePart(args, (i) => `argument ${i + 1} of call(${name})`),
    String((error as Error).message ?? error),
  );
}

/** @internal The error of a call whose result could not be cloned (`error` is the cloning's). */
export function uncloneableResult(error: unknown): errors.Uncloneable {
  return new errors.Uncloneable("the result of a parallel task", String((error as Error).message ?? error));
}
