/**
 * What domains say to each other. Messages travel over MessagePorts between
 * worker threads, so everything in them is structured-cloned; errors are
 * encoded by hand so that Bobbin's error classes keep their class and name.
 */
import * as errors from "../errors.js";
import { decodeOne, portableOf } from "./portable.js";

/** @internal An error as it crosses a thread. */
export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly stack: string | undefined;
  readonly props: Record<string, unknown>;
  /** An error that a portable encodes (see `definePortable`): decoded by it in the receiving domain. */
  readonly portable?: { readonly name: string; readonly data: unknown };
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
  | { kind: "go" };

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
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

/** @internal */
export function encodeError(error: unknown): WireError {
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
  let portable: WireError["portable"] | null = null;
  try {
    portable = portableOf(error);
  } catch {
    // a failing encode: the error crosses as a plain one
  }
  const wire: WireError = { name: error.name, message: error.message, stack: error.stack, props };
  return portable === null ? wire : { ...wire, portable };
}

/**
 * @internal The error again: made by its portable when one encoded it,
 * otherwise of its class when Bobbin or JavaScript defines it.
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
  const Class = KNOWN[wire.name] ?? Error;
  const error = Object.create(Class.prototype) as Error;
  Object.defineProperty(error, "message", { value: wire.message, writable: true, configurable: true });
  Object.defineProperty(error, "stack", { value: wire.stack, writable: true, configurable: true });
  if (Class === Error && wire.name !== "Error")
    Object.defineProperty(error, "name", { value: wire.name, writable: true, configurable: true });
  Object.assign(error, wire.props);
  return error;
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
