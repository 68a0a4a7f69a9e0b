/**
 * Portable values: values that know how to cross domains.
 *
 * Arguments and results of parallel tasks are structured-cloned, which keeps
 * data but loses class identity (and refuses functions). A package whose
 * values must stay themselves in another domain (a lock over a
 * SharedArrayBuffer, say) names a portable: how to recognise one, how to turn
 * it into cloneable data, and how to make it again from that data. Core
 * encodes portables when it sends call arguments and results, and decodes them
 * in the receiving domain, where the module that defined the portable must be
 * loaded too (the task's module imports it).
 *
 * On the wire a portable is `{ "@bobbin/portable": name, data, module? }`
 * (`module`: the URL of its defining module, when given); a message says
 * whether it holds any, so messages without portables are not walked when
 * they arrive.
 */
import { describe } from "../describe.js";
import { definitionAdded } from "./loading.js";

/**
 * How values of one kind cross domains: see {@link definePortable}.
 *
 * @example
 * ```ts
 * const point: B.Portable<Point, [number, number]> = {
 *   test: (v) => v instanceof Point,
 *   encode: (p) => [p.x, p.y],
 *   decode: ([x, y]) => new Point(x, y),
 * };
 * ```
 */
export interface Portable<T extends object, D = unknown> {
  /** Whether `value` (an object or array, never a primitive) is one of these. Must not throw. */
  test(value: object): boolean;
  /** Turns the value into data that structured clone accepts (SharedArrayBuffers are shared, not copied). */
  encode(value: T): D;
  /** Makes the value again from `encode`'s data, in the receiving domain. */
  decode(data: D): T;
}

/** @internal The key of an encoded portable on the wire. */
export const PORTABLE_KEY = "@bobbin/portable";

/**
 * How deep core looks for portables inside plain arrays and plain objects
 * (the arguments array itself is level 0).
 */
const MAX_DEPTH = 16;

interface Entry {
  readonly name: string;
  readonly portable: Portable<object, unknown>;
  /** The URL of the module that defines it, sent along so that a domain that lacks it imports it. */
  readonly module: string | null;
}

const entries: Entry[] = [];
const byName = new Map<string, Entry>();

/**
 * Names a kind of value that keeps its identity across domains: `call` and
 * `parallel` encode such values among their arguments, and parallel tasks
 * among their results (and thrown errors), with `encode`, and the receiving
 * domain makes them again with `decode`. Core looks at the arguments or the
 * result themselves and inside plain arrays and plain objects (object
 * literals, `Object.create(null)`), 16 levels deep; not inside Maps, Sets,
 * class instances or typed arrays. The first portable whose `test` accepts a
 * value encodes it.
 *
 * Give the defining module's `import.meta.url` first (as for `defineTask`):
 * a domain that receives such a value without having loaded that module
 * imports it by itself before decoding — even when the parallel task's module
 * imported it for its types only (TypeScript then drops the import). Without
 * the URL, the module must be imported, for its side effects, by the
 * parallel task's module; a domain that does not know `name` fails the call
 * with a `TypeError` that says so.
 *
 * @example
 * ```ts
 * // counter.ts — imported by the tasks' modules
 * export class SharedCounter {
 *   constructor(readonly cells = new Int32Array(new SharedArrayBuffer(4))) {}
 *   add(n: number) { return Atomics.add(this.cells, 0, n) + n; }
 * }
 * B.definePortable(import.meta.url, "my-lib/SharedCounter", {
 *   test: (v) => v instanceof SharedCounter,
 *   encode: (c: SharedCounter) => c.cells.buffer,
 *   decode: (buffer: SharedArrayBuffer) => new SharedCounter(new Int32Array(buffer)),
 * });
 * // main.ts
 * const counter = new SharedCounter();
 * yield* B.parallel(bump, [counter, counter]);   // each task gets a SharedCounter
 * ```
 * @throws TypeError when `url` is not a module URL, `name` is empty, when
 * `test`, `encode` or `decode` is not a function, or when another portable
 * already has this name.
 */
export function definePortable<T extends object, D>(url: string, name: string, portable: Portable<T, D>): void;
export function definePortable<T extends object, D>(name: string, portable: Portable<T, D>): void;
export function definePortable(first: string, second: unknown, third?: unknown): void {
  const withModule = typeof second === "string";
  const module = withModule ? first : null;
  const name = (withModule ? second : first) as string;
  const portable = (withModule ? third : second) as Portable<object, unknown>;
  if (module !== null && !/^[a-z][a-z0-9+.-]*:/i.test(module)) {
    throw new TypeError(
      `definePortable(url, name, portable) expects the defining module's import.meta.url as url, got ${describe(module)}`,
    );
  }
  if (typeof name !== "string" || name.length === 0) throw new TypeError("definePortable(name, portable) expects a non-empty name");
  if (
    portable === null ||
    typeof portable !== "object" ||
    typeof portable.test !== "function" ||
    typeof portable.encode !== "function" ||
    typeof portable.decode !== "function"
  ) {
    throw new TypeError(`definePortable("${name}", portable) expects { test(value), encode(value), decode(data) }`);
  }
  const known = byName.get(name);
  if (known !== undefined) {
    if (known.portable === portable) return;
    throw new TypeError(`definePortable: a portable named "${name}" is defined already; give each kind of value its own name`);
  }
  const entry: Entry = { name, portable, module };
  entries.push(entry);
  byName.set(name, entry);
  definitionAdded();
}

/**
 * @internal The value with its portables encoded: `value` itself when it holds
 * none (so `encodePortables(v) !== v` says whether the receiver must decode),
 * otherwise a copy of the plain containers on the way to them (and of those
 * on a cycle). Shared references stay shared.
 * @throws whatever a portable's `encode` throws.
 */
export function encodePortables(value: unknown): unknown {
  if (entries.length === 0 || value === null || typeof value !== "object") return value;
  return encode(value, 0, new Map());
}

/** A plain container met while encoding: its copy, once something inside it was encoded. */
interface Visit {
  copy: Record<string, unknown> | null;
  done: boolean;
}

function encode(value: object, depth: number, seen: Map<object, Visit>): unknown {
  for (const entry of entries) {
    if (entry.portable.test(value)) return marker(entry, value);
  }
  if (depth >= MAX_DEPTH) return value;
  const visit = seen.get(value);
  if (visit !== undefined) {
    if (visit.done) return visit.copy ?? value;
    // A cycle back to a container still being walked: it is copied, so that
    // the copy's cycle closes on the copy.
    return (visit.copy ??= shallowCopy(value));
  }
  const isArray = Array.isArray(value);
  if (isArray ? Object.getPrototypeOf(value) !== Array.prototype : !isPlainObject(value)) return value;
  const self: Visit = { copy: null, done: false };
  seen.set(value, self);
  const record = value as Record<string, unknown>;
  const keys = isArray ? null : Object.keys(record);
  const n = keys === null ? (value as unknown[]).length : keys.length;
  for (let i = 0; i < n; i++) {
    const key = keys === null ? i : keys[i]!;
    const v = record[key];
    if (v === null || typeof v !== "object") continue;
    const e = encode(v, depth + 1, seen);
    if (e !== v) (self.copy ??= shallowCopy(value))[key] = e;
  }
  self.done = true;
  return self.copy ?? value;
}

function shallowCopy(value: object): Record<string, unknown> {
  if (Array.isArray(value)) return value.slice() as unknown as Record<string, unknown>;
  return Object.assign(Object.create(Object.getPrototypeOf(value) as object | null) as object, value) as Record<string, unknown>;
}

/** A portable on the wire: its name, its data and, when it was defined with one, its module's URL. */
interface Marker {
  readonly [PORTABLE_KEY]: string;
  readonly data: unknown;
  readonly module?: string;
}

function marker(entry: Entry, value: object): Marker {
  const data = entry.portable.encode(value);
  return entry.module === null ? { [PORTABLE_KEY]: entry.name, data } : { [PORTABLE_KEY]: entry.name, data, module: entry.module };
}

/**
 * @internal Decodes, in place, the portables of a value that arrived from
 * another domain (a structured clone of `encodePortables`' output).
 * @throws TypeError when a portable's name is not defined in this domain;
 * whatever a portable's `decode` throws.
 */
export function decodePortables(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  return walk(value, 0, new Set(), decodeMarker);
}

/**
 * @internal The modules this domain must import before it can decode
 * `value`: those of its portables whose names are not defined here.
 */
export function portableModules(value: unknown): string[] {
  const modules = new Set<string>();
  if (value !== null && typeof value === "object") {
    walk(value, 0, new Set(), (m) => {
      if (m.module !== undefined && !isPortableDefined(m[PORTABLE_KEY])) modules.add(m.module);
      return m;
    });
  }
  return [...modules];
}

/** @internal Whether a portable named `name` is defined in this domain. */
export function isPortableDefined(name: string): boolean {
  return byName.has(name);
}

/** Visits the portables of an arrived value, in place: each is replaced by what `visit` returns. */
function walk(value: object, depth: number, seen: Set<object>, visit: (m: Marker) => unknown): unknown {
  if (Object.hasOwn(value, PORTABLE_KEY)) return visit(value as Marker);
  if (depth >= MAX_DEPTH || seen.has(value)) return value;
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (v !== null && typeof v === "object") value[i] = walk(v, depth + 1, seen, visit);
    }
  } else if (isPlainObject(value)) {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const v = record[key];
      if (v !== null && typeof v === "object") record[key] = walk(v, depth + 1, seen, visit);
    }
  }
  return value;
}

function decodeMarker(m: Marker): unknown {
  return decodeOne(m[PORTABLE_KEY], m.data);
}

/** @internal Makes one portable again from its name and data. */
export function decodeOne(name: string, data: unknown): unknown {
  const entry = byName.get(name);
  if (entry === undefined) {
    throw new TypeError(
      `a value of kind "${name}" came from another domain, but no portable of that name is defined in this one: ` +
        "the module that defines it was not loaded here. Import that module for its side effects in the parallel task's " +
        'module (import "my-lib";): an import used only for types is dropped by TypeScript. Better, define it with ' +
        `definePortable(import.meta.url, "${name}", …): domains then import its module by themselves`,
    );
  }
  return entry.portable.decode(data);
}

/** @internal The portable that encodes `error`, if any (errors cross domains through `encodeError`). */
export function portableOf(value: object): Marker | null {
  for (const entry of entries) {
    if (entry.portable.test(value)) return marker(entry, value);
  }
  return null;
}

/** @internal Imports the modules a domain lacks (see `portableModules`). */
export async function importModules(modules: readonly string[]): Promise<void> {
  await Promise.all(modules.map((url) => import(url)));
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
