/**
 * The default backend: Node's own libuv through `net`, `dgram` and one
 * timer. Works everywhere Node does; in every domain of a run.
 */
import type * as B from "@bobbin/core";
import type { Address, Backend, ListenOptions, ShutdownCommand, Socket, SocketKind } from "../backend.js";
import { defineBackend } from "../define.js";
import { type FlushMode, NodeLoop } from "../loop.js";
import type { SharedSocket } from "../share.js";
import { ShareGuard } from "../share.js";
import { AcceptOp, CloseOp, ConnectOp, ListenOp, ReadOp, RecvOp, SendOp, WriteOp } from "./ops.js";
import { UvSocket } from "./socket.js";

/**
 * Options of {@link libuv}.
 *
 * @example
 * ```ts
 * await run(main, { backend: () => libuv({ flush: "microtask" }) });
 * ```
 */
export interface LibuvOptions {
  /**
   * When a blocked `select` hears of I/O: `"immediate"` (default) batches
   * everything one poll of libuv made ready; `"microtask"` hands over each
   * callback's readiness at once.
   */
  readonly flush?: FlushMode;
}

/**
 * The libuv backend. Make one per run with {@link libuv}.
 *
 * @example
 * ```ts
 * await run(main, { backend: libuv });
 * ```
 * @throws never itself; its operations throw Node's system errors (with `code`) and `SocketClosed`.
 */
export class LibuvBackend extends NodeLoop implements Backend {
  readonly name = "libuv";
  /** @internal Sockets whose Node handle is not yet closed. */
  readonly live = new Set<UvSocket>();
  private drained: (() => void) | null = null;

  constructor(options: LibuvOptions = {}) {
    super(options.flush ?? "immediate");
  }

  socket(kind: SocketKind): Socket {
    return new UvSocket(kind, this);
  }

  bindAndListen(sock: Socket, addr: Address, options: Required<ListenOptions>): B.Operation<void> {
    return new ListenOp(sock as UvSocket, addr, options);
  }

  accept(sock: Socket): B.Operation<[Socket, Address]> {
    return new AcceptOp(sock as UvSocket);
  }

  connect(sock: Socket, addr: Address): B.Operation<void> {
    return new ConnectOp(sock as UvSocket, addr);
  }

  read(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<number> {
    const s = sock as UvSocket;
    let op = s.readOp;
    if (op === null) op = s.readOp = new ReadOp(s);
    else if (op.busy) op = new ReadOp(s); // another read of the socket is in progress
    return op.init(buf, off, len);
  }

  write(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<void> {
    const s = sock as UvSocket;
    let op = s.writeOp;
    if (op === null) op = s.writeOp = new WriteOp(s);
    else if (op.busy) op = new WriteOp(s);
    return op.init(buf, off, len);
  }

  recvfrom(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<[number, Address]> {
    return new RecvOp(sock as UvSocket, buf, off, len);
  }

  sendto(sock: Socket, buf: Uint8Array, off: number, len: number, addr: Address): B.Operation<number> {
    return new SendOp(sock as UvSocket, buf, off, len, addr as { host: string; port: number });
  }

  shutdown(sock: Socket, how: ShutdownCommand): void {
    const s = sock as UvSocket;
    if (how !== "receive" && !s.sendShut) {
      s.sendShut = true;
      if (s.stream !== null && !s.stream.destroyed) s.stream.end();
    }
    if (how !== "send" && !s.receiveShut) {
      s.receiveShut = true;
      s.chunks.length = 0;
      s.chunkOff = 0;
      s.queued = 0;
      for (const op of s.readers.splice(0)) op.ready();
    }
  }

  close(sock: Socket): B.Operation<void> {
    return new CloseOp(sock as UvSocket);
  }

  closeNow(sock: Socket): void {
    (sock as UvSocket).closeNow();
  }

  localAddress(sock: Socket): Address {
    const s = sock as UvSocket;
    if (s.kind === "unix") return { path: s.path };
    try {
      const a = (s.server?.address() ?? s.udp?.address() ?? s.stream?.address()) as { address?: string; port?: number } | null;
      if (a != null && typeof a.address === "string" && typeof a.port === "number") return { host: a.address, port: a.port };
    } catch {
      // a dgram socket not bound yet
    }
    if (s.origin !== null) return s.origin.address; // adopted, its descriptor not here yet
    throw new TypeError(`localAddress(): the ${s.kind} socket is not bound yet`);
  }

  /**
   * Describes a listening socket for another domain: its descriptor is the
   * `net.Server`'s (an adopted listener whose own has not arrived yet passes
   * on its origin's).
   */
  share(sock: Socket): SharedSocket {
    const s = sock as UvSocket;
    const fd = s.origin !== null ? s.adoptedFd : (s.server as unknown as { _handle?: { fd?: unknown } } | null)?._handle?.fd;
    if (typeof fd !== "number" || fd < 0) {
      if (s.origin !== null) return s.origin;
      throw new TypeError(
        `this ${s.kind} listener cannot be given to another domain: Node gives no file descriptor for it on this platform (${process.platform})`,
      );
    }
    s.guard ??= new ShareGuard();
    return { kind: s.kind, fd, address: this.localAddress(s), backlog: s.listenBacklog, guard: s.guard.buffer };
  }

  /**
   * A listener over another domain's listening socket: `listening` at once,
   * accepting once its own descriptor arrived (see relay.ts).
   */
  adopt(shared: SharedSocket): Socket {
    const s = new UvSocket(shared.kind, this);
    s.adopt(shared);
    return s;
  }

  /** Core's `finaliser`: the domain stops. Also begins closing the sockets still open (a worker domain has no `drain`). */
  override finaliser(): void {
    super.finaliser();
    for (const s of [...this.live]) s.closeNow();
  }

  drain(): Promise<void> {
    this.timers.clear();
    for (const s of [...this.live]) s.closeNow();
    if (this.live.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drained = resolve;
    });
  }

  /** @internal A socket's Node handle is gone. */
  handleGone(s: UvSocket): void {
    this.live.delete(s);
    if (this.live.size === 0 && this.drained !== null) {
      const resolve = this.drained;
      this.drained = null;
      resolve();
    }
  }
}

/**
 * Makes a libuv backend: the default of `run`, defined with `defineBackend`
 * so that every worker domain of a run makes its own. Pass `libuv` itself as
 * `run`'s `backend` factory; for options, define a factory of your own with
 * `defineBackend` (an inline `() => libuv({ … })` serves dom0 only).
 *
 * @example
 * ```ts
 * await run(main);                                  // the libuv backend, in every domain
 * await run(main, { backend: libuv });              // the same, explicitly
 * export const eager = defineBackend(import.meta.url, "eager", () => libuv({ flush: "microtask" }));
 * await run(main, { backend: eager });
 * ```
 * @throws never.
 */
export const libuv: (options?: LibuvOptions | number) => LibuvBackend = defineBackend(
  import.meta.url,
  "libuv",
  function libuv(options?: LibuvOptions | number): LibuvBackend {
    return new LibuvBackend(typeof options === "object" && options !== null ? options : {});
  },
);
