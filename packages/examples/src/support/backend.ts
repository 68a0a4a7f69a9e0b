/**
 * Which I/O backend the socket examples run on: `@bobbin/native-poll`'s
 * epoll/kqueue backend when its addon is built, `@bobbin/unix`'s libuv
 * backend otherwise. `BOBBIN_BACKEND=libuv` or `=native` forces one.
 *
 * The servers of chapters 6 and 8 give their listening socket to worker
 * domains, which needs a backend that can share it (`Backend.share` and
 * `adopt`, see `@bobbin/unix`'s README): those programs ask for one, and run on
 * libuv, saying why, while the native backend cannot.
 */
import { type Backend, libuv } from "@bobbin/unix";

/** The backend chosen, and why. */
export interface ChosenBackend {
  readonly name: "native" | "libuv";
  /** The factory to pass as `run(main, { backend })`. */
  readonly factory: (domain: number) => Backend;
  /** Why this one, for the program's first line. */
  readonly reason: string;
}

/** What a program needs of its backend. */
export interface BackendNeeds {
  /** It gives a listening socket to worker domains. */
  readonly sharing?: boolean;
}

/**
 * Whether a backend class shares listening sockets across domains (it has
 * the contract's optional `share` and `adopt`).
 *
 * @example
 * ```ts
 * canShare(LibuvBackend);   // true
 * ```
 */
export function canShare(backend: { readonly prototype: object }): boolean {
  const proto = backend.prototype as { share?: unknown; adopt?: unknown };
  return typeof proto.share === "function" && typeof proto.adopt === "function";
}

/**
 * Picks the backend: the native one if it loads (and, for `needs.sharing`,
 * can share a listening socket across domains), unless `preferred` says
 * otherwise. When `preferred` is "native" but the native backend cannot share
 * what the program shares, it runs on libuv and the reason says so.
 *
 * @example
 * ```ts
 * const backend = await chooseBackend();
 * console.log(`backend: ${backend.name} (${backend.reason})`);
 * await run(main, { backend: backend.factory });
 * ```
 * @throws Error when `preferred` is "native" and the native backend cannot be loaded.
 */
export async function chooseBackend(
  preferred: string | undefined = process.env.BOBBIN_BACKEND,
  needs: BackendNeeds = {},
): Promise<ChosenBackend> {
  if (preferred !== undefined && preferred !== "" && preferred !== "native" && preferred !== "libuv") {
    throw new TypeError(`BOBBIN_BACKEND must be "native" or "libuv", got ${JSON.stringify(preferred)}`);
  }
  const uv: ChosenBackend = { name: "libuv", factory: libuv, reason: "" };
  if (preferred === "libuv") return { ...uv, reason: "BOBBIN_BACKEND=libuv" };
  let why: string;
  try {
    const native = await import("@bobbin/native-poll");
    if (native.nativeAvailable() && needs.sharing === true && !canShare(native.NativeBackend)) {
      const asked = preferred === "native" ? "BOBBIN_BACKEND=native, but " : "";
      return { ...uv, reason: `${asked}the native backend cannot share a listening socket across domains yet: libuv instead` };
    }
    if (native.nativeAvailable()) {
      return {
        name: "native",
        factory: native.nativeBackend,
        reason: preferred === "native" ? "BOBBIN_BACKEND=native" : "the native addon is built",
      };
    }
    why = "the native addon is not built (pnpm --filter @bobbin/native-poll build:native)";
  } catch (error) {
    why = `@bobbin/native-poll did not load: ${(error as Error).message.split("\n")[0]}`;
  }
  if (preferred === "native") throw new Error(`BOBBIN_BACKEND=native, but ${why}`);
  return { ...uv, reason: why };
}
