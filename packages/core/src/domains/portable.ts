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
 * What says "a portable was here" never travels inside the value, where data
 * could imitate it: the encoder copies the plain containers on the way to
 * each portable, leaves `null` in its place, and lists beside the value, in
 * the same message, one slot per portable: the container's copy (structured
 * clone keeps references within a message, so the receiver's slot points
 * into the receiver's copy), the key, the portable's name and data, and the
 * URL of its defining module. The receiving domain decodes at the listed
 * slots only: a user object with any keys at all (`"@bobbin/portable"`
 * included) is data, names no module to import and no portable to decode.
 * A message without portables has no slots and is not walked.
 */
import { describe } from "../describe.js";
import { definitionAdded, importModule } from "./loading.js";
import { checkModuleUrl } from "./module-url.js";

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
  /**
   * Makes the value again from `encode`'s data, in the receiving domain. Core
   * calls it only where a domain's `encode` put a value of this portable, but
   * that data came from another thread: check its shape before trusting it.
   */
  decode(data: D): T;
}

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
  if (module !== null) checkModuleUrl(module, "definePortable(url, name, portable)");
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
 * @internal One portable the encoder took out of a value: where it was (the
 * copy of its container and its key; a null container: it was the value
 * itself), its portable's name and data, and its module's URL (null when
 * defined without one).
 */
export type Slot = readonly [container: object | null, key: string | number, name: string, data: unknown, module: string | null];

/** @internal A value whose portables were taken out: `value` with `null` in their places, and their slots. */
export interface Packed {
  readonly value: unknown;
  readonly slots: Slot[];
}

/**
 * @internal The value with its portables taken out, or null when it holds
 * none (then the value itself is sent, and nothing is decoded). The plain
 * containers on the way to a portable are copied (and those on a cycle);
 * shared references stay shared.
 * @throws whatever a portable's `encode` throws.
 */
export function encodePortables(value: unknown): Packed | null {
  if (entries.length === 0 || value === null || typeof value !== "object") return null;
  const slots: Slot[] = [];
  const entry = entryOf(value);
  if (entry !== null) {
    slots.push([null, 0, entry.name, entry.portable.encode(value), entry.module]);
    return { value: null, slots };
  }
  const copy = encode(value, 0, new Map(), slots);
  return slots.length === 0 ? null : { value: copy, slots };
}

/** The first portable whose `test` accepts `value`. */
function entryOf(value: object): Entry | null {
  for (const entry of entries) if (entry.portable.test(value)) return entry;
  return null;
}

/** A plain container met while encoding: its copy, once something inside it was taken out. */
interface Visit {
  copy: Record<string, unknown> | null;
  done: boolean;
}

/** `value`, or its copy without the portables found inside it (their slots go to `slots`). */
function encode(value: object, depth: number, seen: Map<object, Visit>, slots: Slot[]): unknown {
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
    const entry = entryOf(v);
    if (entry !== null) {
      const data = entry.portable.encode(v);
      const copy = (self.copy ??= shallowCopy(value));
      setOwn(copy, key, null);
      slots.push([copy, key, entry.name, data, entry.module]);
    } else if (depth + 1 < MAX_DEPTH) {
      const e = encode(v, depth + 1, seen, slots);
      if (e !== v) setOwn((self.copy ??= shallowCopy(value)), key, e);
    }
  }
  self.done = true;
  return self.copy ?? value;
}

/** A copy of a plain container; a plain object's own `__proto__` key stays a key (a spread defines, it does not assign). */
function shallowCopy(value: object): Record<string, unknown> {
  if (Array.isArray(value)) return value.slice() as unknown as Record<string, unknown>;
  return { ...value } as Record<string, unknown>;
}

/** @internal Sets an own data property, whatever its key (`__proto__` too: an assignment would change the prototype). */
export function setOwn(target: object, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * @internal Makes again, in place, the portables of a value that arrived from
 * another domain, at the slots its message listed (and nowhere else); returns
 * the value.
 * @throws TypeError when the slots are not a list of slots, or name a portable
 * not defined in this domain; whatever a portable's `decode` throws.
 */
export function decodePortables(value: unknown, slots: unknown): unknown {
  let root = value;
  for (const [container, key, name, data] of slotsOf(slots)) {
    const decoded = decodeOne(name, data);
    if (container === null) root = decoded;
    else setOwn(container, key, decoded);
  }
  return root;
}

/**
 * @internal The modules this domain must import before it can decode a
 * value with these slots: those of its portables whose names are not defined here.
 * @throws TypeError when the slots are not a list of slots.
 */
export function portableModules(slots: unknown): string[] {
  const modules = new Set<string>();
  for (const [, , name, , module] of slotsOf(slots)) if (module !== null && !byName.has(name)) modules.add(module);
  return [...modules];
}

/** The slots of an arrived message, checked: a domain reads nothing else as a portable. */
function slotsOf(slots: unknown): readonly Slot[] {
  if (Array.isArray(slots) && slots.every(isSlot)) return slots;
  throw new TypeError(
    `a message from another domain lists its portables in a form this version of Bobbin does not know (${describe(slots)}); ` +
      "every domain of a run runs the same @bobbin/core",
  );
}

function isSlot(slot: unknown): slot is Slot {
  if (!Array.isArray(slot) || slot.length !== 5) return false;
  const [container, key, name, , module] = slot as unknown[];
  return (
    (container === null || typeof container === "object") &&
    (typeof key === "string" || typeof key === "number") &&
    typeof name === "string" &&
    (module === null || typeof module === "string")
  );
}

/** @internal Whether a portable named `name` is defined in this domain. */
export function isPortableDefined(name: string): boolean {
  return byName.has(name);
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

/** @internal How the portable that accepts `value` (an error, see `encodeError`) encodes it, if one does. */
export function portableOf(value: object): { name: string; data: unknown; module: string | null } | null {
  const entry = entryOf(value);
  return entry === null ? null : { name: entry.name, data: entry.portable.encode(value), module: entry.module };
}

/** @internal Imports the modules a domain lacks (see `portableModules`): `file:` URLs only (see `importModule`). */
export async function importModules(modules: readonly string[]): Promise<void> {
  await Promise.all(modules.map(importModule));
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
