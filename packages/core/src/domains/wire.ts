/**
 * What domains say to each other. Messages travel over MessagePorts between
 * worker threads, so everything in them is structured-cloned: they are small
 * arrays (see `M`); errors are encoded by hand so that they keep their class,
 * name and cause.
 *
 * What arrives is read as data, never trusted: a name selects a class or a
 * decoder only through a Map, an error is rebuilt whatever its fields hold,
 * and a message that is not one of these fails the domain that sent it (see
 * link.ts), not the thread that reads it.
 */
import { describe } from "../describe.js";
import type { DomainSnapshot, TaskSnapshot } from "../diagnostics/snapshot.js";
import * as errors from "../errors.js";
import { adoptOrigin, originFor } from "../kernel/origin.js";
import { registeredClass, registeredClassOf } from "./error-classes.js";
import { decodeOne, isPortableDefined, portableOf, type Slot, setOwn } from "./portable.js";

/** @internal An error as it crosses a thread. */
export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly stack: string | undefined;
  readonly props: Record<string, unknown>;
  /** An error that a portable encodes (see `definePortable`): decoded by it in the receiving domain. */
  readonly portable?: { readonly name: string; readonly data: unknown; readonly module: string | null };
  /** Its class, when registered with `defineError`: rebuilt with it in the receiving domain. */
  readonly class?: { readonly key: string; readonly module: string };
  /** Its `cause`: an error, encoded in turn, or a value. */
  readonly cause?: { readonly error: WireError } | { readonly value: unknown };
  /** The failure it is (see kernel/origin.ts): its copies in every domain are one failure. */
  readonly origin?: string;
}

/**
 * @internal What kind of message a domain received: the first element of
 * every message. Messages are small arrays rather than objects: structured
 * clone writes an object's keys into every message and reads them back, an
 * array of numbers is only its elements (and a typed array costs more than
 * either for a handful of numbers: its buffer is allocated on both sides).
 */
export const M = {
  /**
   * `[CALL, id, from, flags, url, name, args, slots?]`: run `name` of module `url` for domain `from`; its reply is
   * keyed by `id`. `slots`: where `args` held portables (see portable.ts), when they held any.
   */
  CALL: 0,
  /** `[CANCEL, id, from]`: the caller cancelled call `id`. */
  CANCEL: 1,
  /** `[RETURNED, id, value]`: call `id` of this domain ended with its whole subtree, returning `value`. */
  RETURNED: 2,
  /** `[RETURNED_PORTABLE, id, value, slots]`: the same, `value` having held portables, taken out at `slots` (see portable.ts). */
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
/** @internal The last of the call's arguments is the caller's context values (see context.ts). */
export const CALL_CONTEXTS = 2;

/** @internal */
export type CallMessage = readonly [
  kind: typeof M.CALL,
  id: number,
  from: number,
  flags: number,
  url: string,
  name: string,
  args: unknown[],
  slots?: readonly Slot[],
];

/** @internal */
export type Message =
  | CallMessage
  | readonly [kind: typeof M.CANCEL, id: number, from: number]
  | readonly [kind: typeof M.RETURNED, id: number, value: unknown]
  | readonly [kind: typeof M.RETURNED_PORTABLE, id: number, value: unknown, slots: readonly Slot[]]
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
  /** The last element of `args` is the caller's context values, not an argument. */
  readonly contexts: boolean;
  /** Where `args` held portables (see portable.ts); null when they held none. */
  readonly slots: readonly Slot[] | null;
}

/** @internal The message that sends `call`. */
export function callMessage(call: Call): CallMessage {
  const flags = (call.pinned ? CALL_PINNED : 0) | (call.contexts ? CALL_CONTEXTS : 0);
  return call.slots === null
    ? [M.CALL, call.id, call.from, flags, call.url, call.name, call.args]
    : [M.CALL, call.id, call.from, flags, call.url, call.name, call.args, call.slots];
}

/**
 * @internal The call a call message sends (its slots are checked when they are decoded).
 * @throws TypeError when the message is not a call message.
 */
export function readCall(message: readonly unknown[]): Call {
  const [, id, from, flags, url, name, args, slots] = message;
  if (!isId(id) || !isId(from) || !isId(flags) || typeof url !== "string" || typeof name !== "string" || !Array.isArray(args)) {
    throw new TypeError("a call message needs an id, the caller's domain, flags, a module URL, a task name and an array of arguments");
  }
  return {
    id,
    from,
    url,
    name,
    args,
    pinned: (flags & CALL_PINNED) !== 0,
    contexts: (flags & CALL_CONTEXTS) !== 0,
    slots: slots === undefined ? null : (slots as Slot[]),
  };
}

/** @internal Whether `value` can be a call id, a domain or flags: a non-negative integer. */
export function isId(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** @internal Whether `value` is a domain's snapshot (see dump.ts), checked all the way down: `dump` never throws. */
export function isSnapshot(value: unknown): value is DomainSnapshot {
  if (value === null || typeof value !== "object") return false;
  const { domain, tasks, serving } = value as Partial<Record<keyof DomainSnapshot, unknown>>;
  return (
    isId(domain) &&
    Array.isArray(tasks) &&
    tasks.every((t) => isTaskSnapshot(t)) &&
    Array.isArray(serving) &&
    serving.every(
      (s: unknown) =>
        s !== null &&
        typeof s === "object" &&
        isId((s as Record<string, unknown>).from) &&
        isId((s as Record<string, unknown>).id) &&
        isId((s as Record<string, unknown>).uid),
    )
  );
}

const STATES = new Set<unknown>(["running", "ready", "waiting", "ending", "resolved", "failed", "cancelled"]);

function isTaskSnapshot(value: unknown): value is TaskSnapshot {
  if (value === null || typeof value !== "object") return false;
  const t = value as Partial<Record<keyof TaskSnapshot, unknown>>;
  return (
    isId(t.uid) &&
    typeof t.name === "string" &&
    isId(t.domain) &&
    STATES.has(t.state) &&
    typeof t.cancelling === "boolean" &&
    (t.ageMs === null || typeof t.ageMs === "number") &&
    (t.waitsOn === null || typeof t.waitsOn === "string") &&
    (t.suspendedAt === null || typeof t.suspendedAt === "string") &&
    (t.call === undefined || isId(t.call)) &&
    Array.isArray(t.children) &&
    t.children.every((c) => isTaskSnapshot(c))
  );
}

/** @internal The message that fails call `id` with `error`. */
export function failedMessage(id: number, error: unknown): Message {
  return [M.FAILED, id, encodeError(error)];
}

/** The classes an error's name selects (a Map: a name such as "constructor" or "__proto__" selects nothing). */
const KNOWN = new Map<string, abstract new (...args: never[]) => Error>([
  ["BobbinError", errors.BobbinError],
  ["Cancelled", errors.Cancelled],
  ["StillHasChildren", errors.StillHasChildren],
  ["NotAChild", errors.NotAChild],
  ["NoDomainAvailable", errors.NoDomainAvailable],
  ["ResourceLeaked", errors.ResourceLeaked],
  ["NotOwner", errors.NotOwner],
  ["NoSelectProvided", errors.NoSelectProvided],
  ["Deadlock", errors.Deadlock],
  ["Uncloneable", errors.Uncloneable],
  ["CallbackFailed", errors.CallbackFailed],
  ["InternalError", errors.InternalError],
  ["EventOverflow", errors.EventOverflow],
  ["DomainUnresponsive", errors.DomainUnresponsive],
  ["Error", Error],
  ["TypeError", TypeError],
  ["RangeError", RangeError],
  ["SyntaxError", SyntaxError],
  ["ReferenceError", ReferenceError],
  ["EvalError", EvalError],
  ["URIError", URIError],
  ["AggregateError", AggregateError],
]);

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
    if (isCloneable(v)) setOwn(props, key, v);
  }
  const stack = read(error, "stack");
  let wire: WireError = {
    name: safeString(read(error, "name")),
    message: safeString(read(error, "message")),
    stack: typeof stack === "string" ? stack : undefined,
    props,
    origin: originFor(error),
  };
  try {
    const portable = portableOf(error);
    if (portable !== null) wire = { ...wire, portable };
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

/** A property of an error, or undefined when reading it throws (a getter). */
function read(error: Error, key: "name" | "message" | "stack"): unknown {
  try {
    return error[key];
  } catch {
    return undefined;
  }
}

/**
 * @internal The error again: made by its portable when one encoded it,
 * otherwise of its class when registered here (`defineError`) or when
 * Bobbin or JavaScript defines it, otherwise a plain `Error` with its name.
 * Whatever arrived, the result is an `Error`: a value that is not an encoded
 * error becomes a `TypeError` that describes it.
 */
export function decodeError(wire: unknown, depth = 0): Error {
  const error = rebuildError(wire, depth);
  if (isWireError(wire) && typeof wire.origin === "string") adoptOrigin(error, wire.origin);
  return error;
}

function rebuildError(wire: unknown, depth: number): Error {
  if (!isWireError(wire)) {
    return new TypeError(`an error came from another domain in a form this version of Bobbin does not know (${describe(wire)})`);
  }
  if (isPortable(wire.portable)) {
    try {
      const error = decodeOne(wire.portable.name, wire.portable.data);
      if (error instanceof Error) return error;
    } catch {
      // unknown here, or a failing decode: rebuilt as a plain error below
    }
  }
  const Class = (isClass(wire.class) ? registeredClass(wire.class.key) : undefined) ?? KNOWN.get(wire.name) ?? Error;
  const error = Object.create(Class.prototype as object) as Error;
  Object.defineProperty(error, "message", { value: wire.message, writable: true, configurable: true });
  Object.defineProperty(error, "stack", { value: wire.stack, writable: true, configurable: true });
  if (error.name !== wire.name) Object.defineProperty(error, "name", { value: wire.name, writable: true, configurable: true });
  for (const key of Object.keys(wire.props)) setOwn(error, key, wire.props[key]);
  const cause = wire.cause as unknown;
  if (cause !== null && typeof cause === "object") {
    const value = Object.hasOwn(cause, "error")
      ? depth < MAX_CAUSES
        ? decodeError((cause as { error: unknown }).error, depth + 1)
        : undefined
      : (cause as { value?: unknown }).value;
    Object.defineProperty(error, "cause", { value, writable: true, configurable: true });
  }
  return error;
}

/**
 * @internal The modules this domain must import before it decodes `wire`
 * with every class and portable it names (those defined with a module URL).
 */
export function errorModules(wire: unknown): string[] {
  const modules = new Set<string>();
  let w = wire;
  for (let depth = 0; depth <= MAX_CAUSES && isWireError(w); depth++) {
    if (isPortable(w.portable) && w.portable.module !== null && !isPortableDefined(w.portable.name)) modules.add(w.portable.module);
    if (isClass(w.class) && registeredClass(w.class.key) === undefined) modules.add(w.class.module);
    const cause = w.cause as unknown;
    w = cause !== null && typeof cause === "object" && Object.hasOwn(cause, "error") ? (cause as { error: unknown }).error : undefined;
  }
  return [...modules];
}

function isWireError(w: unknown): w is WireError {
  if (w === null || typeof w !== "object") return false;
  const { name, message, stack, props } = w as Partial<Record<keyof WireError, unknown>>;
  return (
    typeof name === "string" &&
    typeof message === "string" &&
    (stack === undefined || typeof stack === "string") &&
    props !== null &&
    typeof props === "object"
  );
}

function isPortable(p: unknown): p is NonNullable<WireError["portable"]> {
  if (p === null || typeof p !== "object") return false;
  const { name, module } = p as { name?: unknown; module?: unknown };
  return typeof name === "string" && (module === null || typeof module === "string");
}

function isClass(c: unknown): c is NonNullable<WireError["class"]> {
  return (
    c !== null &&
    typeof c === "object" &&
    typeof (c as { key?: unknown }).key === "string" &&
    typeof (c as { module?: unknown }).module === "string"
  );
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
