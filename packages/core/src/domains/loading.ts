/**
 * How a worker domain loads the module that defines something it needs (a
 * parallel task, an events factory, a portable, an error class): it imports
 * the module by its URL, and stops waiting as soon as the definition exists.
 *
 * Waiting for the definition rather than for the import matters when the
 * module is the program's entry, which defines a task and calls `run` at its
 * top level: in a worker domain that `run` does nothing and its Promise never
 * settles (see run.ts), so an entry that awaits it never finishes importing,
 * although the tasks defined above the `run` exist. A definition that comes
 * after such a `run` never will: the import stalls there, and the load fails
 * with an error that says so rather than waiting forever.
 *
 * A domain imports only the program's own modules: the URLs it is given come
 * from `defineTask`, `defineEvents`, `definePortable` and `defineError` in
 * the domain that sent them (their `import.meta.url`), and it refuses any
 * that is not a `file:` URL (`data:`, `http:`, `node:`…), whatever sent it.
 */
import { describe } from "../describe.js";

/** Wakes the loads in progress: something was defined, or a top-level `run` was ignored. */
let wake: (() => void) | null = null;
let woken: Promise<void> | null = null;
/** How many top-level `run` calls this thread has ignored (see `ignoredRun`). */
let ignoredRuns = 0;

function nextChange(): Promise<void> {
  woken ??= new Promise<void>((resolve) => {
    wake = resolve;
  });
  return woken;
}

function changed(): void {
  const resolve = wake;
  wake = null;
  woken = null;
  resolve?.();
}

/** @internal A definition was registered in this thread (`defineTask`, `defineEvents`…). */
export function definitionAdded(): void {
  if (wake !== null) changed();
}

let workerDomain = false;

/**
 * @internal Whether this thread is a worker domain of a run, where `run`
 * outside a task is the entry module's, imported for its definitions.
 */
export function isWorkerDomainThread(): boolean {
  return workerDomain;
}

/** @internal This thread became a worker domain (worker.ts). */
export function becomeWorkerDomain(): void {
  workerDomain = true;
}

/** @internal A `run` at the top level of a module imported by this worker domain was ignored. */
export function ignoredRun(): void {
  ignoredRuns++;
  changed();
}

/**
 * How long a load waits for a definition once the module it imports has
 * called `run`: an entry that awaits its `run` stalls there for good, but a
 * module may also await real work at its top level.
 */
const STALL_MS = 500;

/** Resolves with "stalled" after `STALL_MS`; holds no handle (the load's caller keeps the thread alive). */
const stallTimer = (): Promise<"stalled"> => new Promise((resolve) => setTimeout(resolve, STALL_MS, "stalled").unref());

/**
 * @internal Imports `url` until `lookup` finds the definition. Rejects with
 * what the import threw, with `missing()` when the module loaded without
 * defining it, and with `stalled()` when the module called `run` at its top
 * level before defining it.
 */
export async function loadDefinition<T>(url: string, lookup: () => T | undefined, missing: () => Error, stalled: () => Error): Promise<T> {
  let settled = false;
  let failure: unknown = null;
  const imported = importModule(url).then(
    () => {
      settled = true;
    },
    (error: unknown) => {
      settled = true;
      failure = error;
    },
  );
  let stall: Promise<"stalled"> | null = null;
  for (;;) {
    const found = lookup();
    if (found !== undefined) return found;
    if (settled) throw failure === null ? missing() : explainImportFailure(url, failure);
    // Once a top-level run was ignored here, an import that neither settles nor defines for a while has stalled on it.
    if (ignoredRuns !== 0) stall ??= stallTimer();
    const waits: Promise<unknown>[] = stall === null ? [imported, nextChange()] : [imported, nextChange(), stall];
    if ((await Promise.race(waits)) === "stalled" && lookup() === undefined && !settled) throw stalled();
  }
}

/**
 * @internal Imports a module that another domain named (or the workers' tsx
 * loader): a `file:` URL only (see the file comment).
 * @throws (rejects with) TypeError for any other URL; whatever the import throws.
 */
export async function importModule(url: string): Promise<unknown> {
  if (!isFileUrl(url)) {
    throw new TypeError(
      `a domain was asked to import ${describe(url)}, but domains import only the program's own modules, by their file: URL ` +
        "(the import.meta.url given to defineTask, defineEvents, definePortable or defineError); data:, http:, https:, node: " +
        "and every other kind of URL are refused. Define parallel tasks, portables and error classes in modules loaded from files",
    );
  }
  return import(url);
}

function isFileUrl(url: unknown): boolean {
  if (typeof url !== "string") return false;
  try {
    return new URL(url).protocol === "file:";
  } catch {
    return false;
  }
}

/** A TypeScript module that Node could not load in a worker gets an error that says what to configure. */
function explainImportFailure(url: string, error: unknown): unknown {
  if ((error as { code?: unknown } | null)?.code !== "ERR_UNKNOWN_FILE_EXTENSION" || !/\.[mc]?tsx?$/.test(url)) return error;
  return new TypeError(
    `a worker domain cannot load the TypeScript module ${url}: Node's worker threads need a TypeScript loader of their own. ` +
      "Run the program on a Node that strips types itself (22.18 and later, or 22.6 and later with --experimental-strip-types), " +
      "or with tsx (tsx main.ts, or node --import tsx main.ts: Bobbin registers tsx in its workers) " +
      "or ts-node (node --loader ts-node/esm main.ts), or build the program to JavaScript first",
    { cause: error },
  );
}
