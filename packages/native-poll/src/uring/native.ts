/**
 * The addon's io_uring half (native/uring.h, native/uring_node.cc), as the
 * uring backend sees it. Linux only: elsewhere the addon has none of it.
 */
import { BUILD_SCRIPT, loadNative } from "../load.js";

/** @internal Byte offsets into the ring mapping. */
export interface UringLayout {
  readonly sqHead: number;
  readonly sqTail: number;
  readonly sqMask: number;
  readonly sqEntries: number;
  readonly sqFlags: number;
  readonly cqHead: number;
  readonly cqTail: number;
  readonly cqMask: number;
  readonly cqEntries: number;
  readonly cqes: number;
}

/** @internal What `new NativeUring` is given. */
export interface UringConfig {
  readonly entries: number;
  readonly buffers: number;
  readonly bufferSize: number;
  readonly staging: number;
  readonly stagingSize: number;
  /** 0 auto, 1 defer, 2 coop, 3 signal (native TaskRun). */
  readonly taskRun: number;
}

/** @internal A ring in Node's loop; its memory, the addon's, is shared with JavaScript. */
export interface NativeUringHandle {
  /** Two int32s: [0] the SQ tail as JavaScript wrote it (the addon publishes it); [1] 1 while the addon's pump runs. */
  readonly control: ArrayBuffer;
  readonly sqes: ArrayBuffer;
  readonly rings: ArrayBuffer;
  readonly bufferRing: ArrayBuffer;
  readonly buffers: ArrayBuffer;
  readonly staging: ArrayBuffer;
  readonly layout: UringLayout;
  /** Addresses of the provided buffers and of the staging area. */
  readonly bufferBase: number;
  readonly stagingBase: number;
  readonly setupFlags: number;
  /** Submits up to the tail in `control[0]`, runs completion work; SQEs submitted or -errno. */
  submit(): number;
  ref(): void;
  unref(): void;
  destroy(): void;
}

/** @internal */
export interface NativeUringClass {
  /** `onBatch(0)`: completions to reap; `onBatch(-errno, failed)`: `io_uring_enter` or `uv_poll` failed. */
  new (onBatch: (status: number, failed?: string) => void, config: UringConfig): NativeUringHandle;
}

/** @internal The kernel's ABI values the backend writes and reads. */
export interface UringConstants {
  readonly OP_RECV: number;
  readonly OP_SEND: number;
  readonly OP_ACCEPT: number;
  readonly OP_POLL_ADD: number;
  readonly OP_ASYNC_CANCEL: number;
  readonly RECV_MULTISHOT: number;
  readonly ACCEPT_MULTISHOT: number;
  readonly SQE_BUFFER_SELECT: number;
  readonly CQE_F_BUFFER: number;
  readonly CQE_F_MORE: number;
  readonly CQE_BUFFER_SHIFT: number;
  readonly ASYNC_CANCEL_ALL: number;
  readonly SETUP_SINGLE_ISSUER: number;
  readonly SETUP_DEFER_TASKRUN: number;
  readonly SETUP_COOP_TASKRUN: number;
  readonly BUFFER_GROUP: number;
  readonly BUFFER_RING_TAIL: number;
  readonly MSG_NOSIGNAL: number;
  readonly MSG_WAITALL: number;
  readonly SOCK_NONBLOCK: number;
  readonly SOCK_CLOEXEC: number;
  readonly POLLIN: number;
  readonly POLLOUT: number;
}

/** @internal */
export interface UringAddon {
  readonly NativeUring: NativeUringClass;
  uringProbe(): { reason: string; flags: number };
  readonly uringConstants: UringConstants;
}

/**
 * @internal The addon's io_uring half, or why there is none (not Linux; the
 * addon not built: its error's message).
 */
export function uringAddon(): UringAddon | string {
  if (process.platform !== "linux") return `io_uring is Linux's; this is ${process.platform}`;
  let addon: Partial<UringAddon>;
  try {
    addon = loadNative() as unknown as Partial<UringAddon>;
  } catch (error) {
    return (error as Error).message;
  }
  if (addon.NativeUring === undefined || addon.uringProbe === undefined || addon.uringConstants === undefined) {
    return `the native addon was built without its io_uring part (an older build): rebuild it (node ${BUILD_SCRIPT} --force)`;
  }
  return addon as UringAddon;
}
