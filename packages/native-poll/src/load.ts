/**
 * Loading the C++ addon — a build from source (`build/Release`) or else the
 * prebuilt binary of this platform (`prebuilds/`), as node-gyp-build picks it —
 * with an error that says how to build it when there is none.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { arenaErrorFactory } from "./errors.js";
import { NativeUnavailable, PACKAGE_ROOT } from "./unavailable.js";

const require = createRequire(import.meta.url);

/** @internal The install script where this package is installed: `node <it> --force` rebuilds the addon from source. */
export const BUILD_SCRIPT = join(PACKAGE_ROOT, "scripts", "build.mjs");

/**
 * @internal The addon's poller class (native/poller_node.cc). `onBatch` gets
 * the count of events in `batch`, or a negative errno and the name of what
 * failed (`"epoll_wait"`, `"kevent"`, `"uv_poll"`, `"detached"`).
 */
export interface NativePollerClass {
  new (batchEvents: number, onBatch: (count: number, woken: boolean, failed?: string) => void): NativePollerHandle;
}

/** @internal The memories it shares are the addon's, shown as ArrayBuffers (native/shared_area.h). */
export interface NativePollerHandle {
  /** The batch: `batchEvents` × EVENT_INTS int32s. */
  readonly batch: ArrayBuffer;
  add(fd: number, interest: number, mode: number): number;
  modify(fd: number, interest: number): number;
  rearm(fd: number): number;
  disarm(fd: number): number;
  remove(fd: number): number;
  close(fd: number): number;
  interrupt(): number;
  poll(timeoutMs: number): number;
  generation(fd: number): number;
  /** The read-ahead's area, made by the addon. */
  readAhead(areaBytes: number): ArrayBuffer;
  /** A new, zeroed table of the bytes to read ahead per fd, replacing the last one. */
  wants(length: number): ArrayBuffer;
  /** The queued sends' staging area and entries ([count, then (fd, offset, length, result) per entry]). */
  sendQueue(stagingBytes: number, entries: number): [ArrayBuffer, ArrayBuffer];
  flush(): number;
  ref(): void;
  unref(): void;
  destroy(): void;
  readonly fd: number;
  readonly registered: number;
}

/** @internal The addon's arena pool class (native/arena_node.cc). */
export interface NativeArenaPoolClass {
  new (slotSize: number, maxArenas: number, memory: number): NativeArenaPoolHandle;
}

/** @internal */
export interface NativeArenaPoolHandle {
  alloc(): number;
  release(id: number): number;
  check(id: number): void;
  arenaBuffer(index: number): ArrayBuffer | undefined;
  stats(): {
    slotSize: number;
    stride: number;
    arenaBytes: number;
    arenas: number;
    online: number;
    inUse: number;
    maxArenas: number;
    memory: "mmap" | "js";
  };
  residentBytes(): number;
  close(): void;
}

/** @internal Addresses as the addon writes them. */
export interface NativeAddressOut {
  host?: string;
  port?: number;
  path?: string;
}

/** @internal The addon's raw system calls (native/syscalls.cc): results ≥ 0 or -errno. */
export interface NativeSyscalls {
  socket(family: number, type: number): number;
  bind(fd: number, host: string, port: number): number;
  listen(fd: number, backlog: number): number;
  accept(fd: number, out?: NativeAddressOut): number;
  connect(fd: number, host: string, port: number): number;
  socketError(fd: number): number;
  read(fd: number, buf: ArrayBufferView, off: number, len: number): number;
  write(fd: number, buf: ArrayBufferView, off: number, len: number): number;
  readv(fd: number, bufs: readonly ArrayBufferView[]): number;
  writev(fd: number, bufs: readonly ArrayBufferView[]): number;
  recvfrom(fd: number, buf: ArrayBufferView, off: number, len: number, out?: NativeAddressOut): number;
  sendto(fd: number, buf: ArrayBufferView, off: number, len: number, host: string, port: number): number;
  shutdown(fd: number, how: number): number;
  close(fd: number): number;
  dup(fd: number): number;
  setsockopt(fd: number, level: number, name: number, value: number): number;
  getsockopt(fd: number, level: number, name: number): number;
  getsockname(fd: number, out: NativeAddressOut): number;
  getpeername(fd: number, out: NativeAddressOut): number;
  pipe(): [number, number] | number;
  socketpair(type: number): [number, number] | number;
}

/**
 * What the loaded addon says about this platform.
 *
 * @example
 * ```ts
 * const { mechanism, externalBuffers } = loadNative();   // "epoll", true on Linux
 * ```
 */
export interface NativeInfo {
  /** The kernel's readiness interface the poller uses. */
  readonly mechanism: "epoll" | "kqueue";
  /** Whether this runtime allows external buffers, so arenas are mmap memory (false: the JS-owned fallback). */
  readonly externalBuffers: boolean;
}

/** @internal Everything the addon exports. */
export interface NativeAddon extends NativeInfo {
  NativePoller: NativePollerClass;
  NativeArenaPool: NativeArenaPoolClass;
  syscalls: NativeSyscalls;
  sockopts: Readonly<Record<string, number>>;
  constants: {
    READABLE: number;
    WRITABLE: number;
    HANGUP: number;
    ERROR: number;
    EDGE: number;
    LEVEL: number;
    ONESHOT: number;
    EVENT_INTS: number;
    NOT_READ: number;
    NOT_SENT: number;
    SEND_INTS: number;
    SLOTS_PER_ARENA: number;
    CANARY_BYTES: number;
  };
  setArenaErrorFactory(
    factory: (kind: string, id: number, arena: number, slot: number, slotSize: number, operation: string) => Error,
  ): void;
}

let addon: NativeAddon | null = null;
let failure: NativeUnavailable | null = null;

/** The addon's file: `BOBBIN_NATIVE_ADDON`, or what node-gyp-build picks; or why there is none. */
function locate(): string | NativeUnavailable {
  if (process.platform === "win32") return new NativeUnavailable("Windows has neither epoll nor kqueue");
  const override = process.env.BOBBIN_NATIVE_ADDON;
  if (override !== undefined && override !== "") {
    return existsSync(override) ? override : new NativeUnavailable(`BOBBIN_NATIVE_ADDON=${override} does not exist`);
  }
  try {
    return (require("node-gyp-build") as { path(dir: string): string }).path(PACKAGE_ROOT);
  } catch {
    return new NativeUnavailable(
      `no prebuilt binary for ${process.platform}-${process.arch} in ${PACKAGE_ROOT}prebuilds, and no build from source in ${PACKAGE_ROOT}build/Release`,
    );
  }
}

/**
 * Loads the addon once per thread and says what it runs on.
 *
 * @example
 * ```ts
 * const native = loadNative();
 * native.mechanism;   // "epoll" on Linux, "kqueue" on macOS/BSD
 * ```
 * @throws NativeUnavailable when the addon is not built or does not load; the
 * message says how to build it.
 */
export function loadNative(): NativeInfo {
  return loadAddon();
}

/** @internal Loads the addon once per thread and returns all it exports; throws `NativeUnavailable`. */
export function loadAddon(): NativeAddon {
  if (addon !== null) return addon;
  if (failure !== null) throw failure;
  const path = locate();
  if (path instanceof NativeUnavailable) throw (failure = path);
  try {
    const loaded = require(path) as NativeAddon;
    loaded.setArenaErrorFactory(arenaErrorFactory);
    addon = loaded;
  } catch (error) {
    failure = new NativeUnavailable(`${path} did not load: ${(error as Error).message}`);
    throw failure;
  }
  return addon;
}
