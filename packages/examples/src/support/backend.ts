/**
 * Which I/O backend the socket examples run on: `@bobbin/native-poll`'s
 * epoll/kqueue backend when its addon is built, `@bobbin/unix`'s libuv
 * backend otherwise. `BOBBIN_BACKEND` picks one: `libuv`, `native`, `uring`,
 * or any backend module as `<module>#<export>` — a package name or a path
 * (relative to the current directory) and the name of the factory it
 * exports, defined with `defineBackend` so that worker domains make their
 * own (`BOBBIN_BACKEND=./dist/poll-backend/backend.js#pollBackend`).
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type Backend, libuv } from "@bobbin/unix";

/** The backend chosen, and why. */
export interface ChosenBackend {
  /** How the program's first line names it: `libuv`, `native`, `uring`, or the module's export. */
  readonly name: string;
  /** The factory to pass as `run(main, { backend })`. */
  readonly factory: (domain: number) => Backend;
  /** Why this one, for the program's first line. */
  readonly reason: string;
  /** The `BOBBIN_BACKEND` that picks it again (for a child process): its name, or the module's `<module>#<export>`. */
  readonly choice: string;
}

type Factory = (domain: number) => Backend;

/** A module specifier as `import()` takes it: a path becomes a file URL (relative to the current directory). */
function specifierOf(module: string): string {
  if (module.startsWith(".") || isAbsolute(module)) return pathToFileURL(resolve(module)).href;
  return module;
}

/**
 * The factory `<module>#<export>` names.
 * @throws TypeError when the module does not export a function by that name.
 */
async function moduleBackend(choice: string): Promise<ChosenBackend> {
  const hash = choice.lastIndexOf("#");
  if (hash <= 0 || hash === choice.length - 1) {
    throw new TypeError(
      `BOBBIN_BACKEND must be "libuv", "native", "uring" or a backend module as "<module>#<export>" (e.g. "./dist/poll-backend/backend.js#pollBackend"), got ${JSON.stringify(choice)}`,
    );
  }
  const module = choice.slice(0, hash);
  const name = choice.slice(hash + 1);
  const exports = (await import(specifierOf(module))) as Record<string, unknown>;
  const factory = exports[name];
  if (typeof factory !== "function") {
    throw new TypeError(
      `BOBBIN_BACKEND=${choice}: ${module} exports no backend factory named ${name} (it has ${Object.keys(exports).join(", ") || "no exports"})`,
    );
  }
  return { name, factory: factory as Factory, reason: `BOBBIN_BACKEND=${choice}`, choice };
}

/**
 * Picks the backend: `preferred` (by default `BOBBIN_BACKEND`) when given,
 * else the native one if its addon loads, else libuv.
 *
 * @example
 * ```ts
 * const backend = await chooseBackend();
 * console.log(`backend: ${backend.name} (${backend.reason})`);
 * await run(main, { backend: backend.factory });
 * ```
 * @throws Error when `native` or `uring` is asked for and cannot work here; TypeError for a module without that export.
 */
export async function chooseBackend(preferred: string | undefined = process.env.BOBBIN_BACKEND): Promise<ChosenBackend> {
  if (preferred === "libuv") return { name: "libuv", factory: libuv, reason: "BOBBIN_BACKEND=libuv", choice: "libuv" };
  if (preferred !== undefined && preferred !== "" && preferred !== "native" && preferred !== "uring") return moduleBackend(preferred);
  let why: string;
  try {
    const native = await import("@bobbin/native-poll");
    if (preferred === "uring") {
      const { available, reason } = native.uringSupport();
      if (!available) throw new Error(`BOBBIN_BACKEND=uring, but the io_uring backend is not available here: ${reason}`);
      return { name: "uring", factory: native.uringBackend, reason: "BOBBIN_BACKEND=uring", choice: "uring" };
    }
    if (native.nativeAvailable()) {
      return {
        name: "native",
        factory: native.nativeBackend,
        reason: preferred === "native" ? "BOBBIN_BACKEND=native" : "the native addon is built",
        choice: "native",
      };
    }
    why = "the native addon is not built (pnpm --filter @bobbin/native-poll build:native)";
  } catch (error) {
    if (preferred === "uring") throw error;
    why = `@bobbin/native-poll did not load: ${(error as Error).message.split("\n")[0]}`;
  }
  if (preferred === "native") throw new Error(`BOBBIN_BACKEND=native, but ${why}`);
  return { name: "libuv", factory: libuv, reason: why, choice: "libuv" };
}
