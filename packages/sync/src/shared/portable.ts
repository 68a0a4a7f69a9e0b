/**
 * @internal
 * How the package's values cross domains. Each kind of shared primitive
 * registers one portable with core's `definePortable` through
 * {@link sharePortable}; in every thread, one primitive is one object
 * (decoding the same buffer twice in a thread gives the same object back, and
 * a primitive sent back to its thread is the sender's own object again).
 * Values that only live in their domain register with {@link keepLocal}, so
 * that sending one is a clear error rather than a copy that silently lost
 * its state.
 */
import { definePortable, type Portable } from "@bobbin/core";
import type { Agent } from "./agent.js";
import { allocate, cellsOf, type Kind, type SharedData } from "./layout.js";

/** @internal A class, as far as `instanceof` is concerned. */
export type Class<P extends object> = abstract new (...args: never[]) => P;

/** @internal What the helpers need to know of one kind of primitive. */
export interface Sharing<P extends object> {
  readonly kind: Kind;
  /** How a local one is made, named in the error when it is sent to another domain. */
  readonly local: string;
  /** How a shared one is made, named in that error too. */
  readonly shared: string;
  /** The primitive's class: its instances, local or shared, are this kind's values. */
  readonly type: Class<P>;
  /** Its agent; null for a local primitive. */
  agentOf(primitive: P): Agent | null;
  /** A new primitive of this thread over `cells`, with its agent. */
  make(id: string, cells: Int32Array): P;
}

const live = new Map<string, WeakRef<object>>();
const forget = new FinalizationRegistry<string>((id) => {
  if (live.get(id)?.deref() === undefined) live.delete(id);
});

/** This thread's object for the shared primitive `id`: the known one, or `make()`'s. */
function adopt<P extends object>(id: string, make: () => P): P {
  const known = live.get(id)?.deref();
  if (known !== undefined) return known as P;
  const made = make();
  live.set(id, new WeakRef(made));
  forget.register(made, id);
  return made;
}

/** @internal A new shared primitive; `init` writes its header's initial words. */
export function createShared<P extends object>(sharing: Sharing<P>, init?: (cells: Int32Array) => void): P {
  const data = allocate(sharing.kind);
  const cells = new Int32Array(data.buffer);
  init?.(cells);
  return adopt(data.id, () => sharing.make(data.id, cells));
}

/**
 * @internal Registers (and returns) the portable of a kind of primitive:
 * `@bobbin/sync/<name>`. A shared primitive crosses as its id and buffer; a
 * local one refuses to cross.
 */
export function sharePortable<P extends object>(sharing: Sharing<P>): Portable<P, SharedData> {
  const { kind, local, shared } = sharing;
  const portable: Portable<P, SharedData> = {
    test: (value) => value instanceof sharing.type,
    encode(primitive) {
      const agent = sharing.agentOf(primitive);
      if (agent === null) throw staysHome(`${kind.name} made with ${local}`, `make it with ${shared}`);
      return { id: agent.id, buffer: agent.cells.buffer as SharedArrayBuffer };
    },
    decode(data) {
      const cells = cellsOf(data, kind);
      return adopt(data.id, () => sharing.make(data.id, cells));
    },
  };
  // With this module's URL: a domain that receives one imports @bobbin/sync itself, even when the
  // parallel task's module imported Mutex for its type only (TypeScript then drops the import).
  definePortable(import.meta.url, `@bobbin/sync/${kind.name}`, portable);
  return portable;
}

/**
 * @internal Registers a portable that refuses to send the instances of
 * `type` (named `name`) to another domain; `advice` says what to do instead.
 */
export function keepLocal(name: string, type: Class<object>, advice: string): void {
  definePortable(`@bobbin/sync/${name}`, {
    test: (value) => value instanceof type,
    encode() {
      throw staysHome(name, advice);
    },
    decode() {
      throw staysHome(name, advice); // nothing encodes one: only a forged message gets here
    },
  });
}

function staysHome(what: string, advice: string): TypeError {
  return new TypeError(`a ${what} belongs to its domain and cannot be passed to another: ${advice}`);
}
