/**
 * What domains say to each other. Messages travel over MessagePorts between
 * worker threads, so everything in them is structured-cloned; errors are
 * encoded by hand so that Bobbin's error classes keep their class and name.
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

/** @internal */
export type Message =
  /**
   * Run `name` of module `url` for domain `from`; its reply is keyed by `id`.
   * `portable`: `args` hold encoded portables (see portable.ts).
   */
  | { kind: "call"; id: number; from: number; url: string; name: string; args: unknown[]; pinned: boolean; portable?: true }
  /** The caller cancelled call `id`. */
  | { kind: "cancel"; id: number; from: number }
  /** Call `id` of this domain ended, with its whole subtree. */
  | { kind: "result"; id: number; ok: true; value: unknown; portable?: true }
  | { kind: "result"; id: number; ok: false; error: WireError }
  /** A rule was broken in a worker: the run fails. */
  | { kind: "fatal"; error: WireError }
  /** A worker has nothing to run (work sharing). */
  | { kind: "idle"; from: number }
  /** Dom0 tells a worker to stop: the run is over. */
  | { kind: "shutdown" }
  /** A worker has started (worker → dom0). */
  | { kind: "ready"; from: number }
  /** Every worker has started: start serving calls (dom0 → workers). */
  | { kind: "go" }
  /** Domain `from` takes a dump: send it a snapshot of this domain's tasks, keyed by `id`. */
  | { kind: "dump"; id: number; from: number }
  /** The answer to a `dump`. */
  | { kind: "snapshot"; id: number; snapshot: DomainSnapshot };

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
export function uncloneablePart(values: readonly unknown[], label: (i: number) => string): string {
  for (let i = 0; i < values.length; i++) if (!isCloneable(values[i])) return label(i);
  return "a value";
}
