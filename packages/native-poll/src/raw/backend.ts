/**
 * The contract's entry points that both raw-descriptor backends answer the
 * same way: making sockets, binding, connecting and sending datagrams
 * (`raw/ops.ts`); accept, recvfrom, write and close with each backend's own
 * operation classes (`RawOps`); addresses, the kept read and write of a
 * stream, select's look without waiting, and listening sockets across
 * domains over `dup(2)`.
 */
import type * as B from "@bobbin/core";
import type { Address, Backend, InetAddress, ListenSettings, ShutdownCommand, Socket, SocketKind } from "@bobbin/unix";
import { adoptDescriptor, type BufferOp, describeListener, NodeLoop, type SharedSocket } from "@bobbin/unix/backend";
import { errnoException } from "../errno.js";
import type { NativeAddressOut } from "../load.js";
import { BackendFailure } from "./failure.js";
import type { RawIo } from "./io.js";
import { ConnectOp, ListenOp, SendToOp, type TakingTurns } from "./ops.js";
import type { RawSocket } from "./socket.js";

/** @internal A socket of a raw backend that keeps its write operation for the next call (its read: `keptRead`, the record's). */
export interface Keeping extends RawSocket, TakingTurns {
  writeOp: BufferOp<void> | null;
}

/**
 * @internal The operation classes a raw backend makes for the entry points
 * both answer alike; each takes the backend's I/O, the socket and a label.
 */
export interface RawOps<S extends Keeping, I extends RawIo<S>> {
  readonly Write: new (io: I, s: S, label: string) => BufferOp<void>;
  readonly Accept: new (io: I, s: S, label: string) => B.Operation<[S, Address]>;
  readonly Recv: new (io: I, s: S, label: string) => BufferOp<[number, Address]>;
  readonly Close: new (io: I, s: S, label: string) => B.Operation<void>;
}

/** @internal What both raw-descriptor backends have in common. */
export abstract class RawBackend<S extends Keeping, I extends RawIo<S>> extends NodeLoop implements Backend {
  abstract readonly name: string;
  /** What failed under the poller or ring in a Node callback: thrown by the next `select`, which fails the run. */
  protected readonly failure = new BackendFailure(() => this.interrupt());

  /** @internal The backend's I/O: its system calls, fds and parked operations. */
  readonly io: I;

  readonly #ops: RawOps<S, I>;
  readonly #eager: boolean;

  /**
   * @param io makes the backend's I/O, given where to report what fails under it outside any operation.
   * @param ops the backend's operation classes.
   * @param eager the `eagerPoll` option: whether a blocking `select` first looks for I/O without waiting.
   */
  constructor(io: (failed: (error: Error) => void) => I, ops: RawOps<S, I>, eager = true) {
    super("microtask");
    this.io = io((error) => this.failure.fail(error));
    this.#ops = ops;
    this.#eager = eager;
  }

  /**
   * Whether `select` looks for I/O without waiting before it goes on:
   * operations are parked, and the scheduler is busy (`block` false) or
   * `eagerPoll` is on.
   */
  protected pollsFirst(block: boolean): boolean {
    return this.io.parked.count !== 0 && (!block || this.#eager);
  }

  /** A socket of this backend (no fd yet). */
  protected abstract make(kind: SocketKind): S;
  /**
   * Takes all of `buf[off, off + len)` for sending without waiting (copied),
   * or nothing (false): the socket's sending side is free when it is called.
   */
  protected abstract sendNow(s: S, buf: Uint8Array, off: number, len: number): boolean;
  /** A new read operation of `s`. */
  protected abstract newRead(s: S): BufferOp<number>;

  abstract pending(): boolean;
  abstract shutdown(sock: Socket, how: ShutdownCommand): void;
  abstract closeNow(sock: Socket): void;
  abstract drain(): Promise<void>;

  socket(kind: SocketKind): Socket {
    return this.make(kind);
  }

  bindAndListen(sock: Socket, addr: Address, options: ListenSettings): B.Operation<void> {
    return new ListenOp(this.io, sock as S, addr, options);
  }

  connect(sock: Socket, addr: Address): B.Operation<void> {
    return new ConnectOp(this.io, sock as S, addr);
  }

  /** The socket's kept read while it is idle, else a new one. */
  read(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<number> {
    const s = sock as S;
    let op = (s.keptRead ??= this.newRead(s));
    if (op.busy) op = this.newRead(s); // another read of the socket is in progress
    return op.init(buf, off, len);
  }

  /** The socket's kept write while it is idle, else a new one. */
  write(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<void> {
    const s = sock as S;
    let op = (s.writeOp ??= new this.#ops.Write(this.io, s, "write"));
    if (op.busy) op = new this.#ops.Write(this.io, s, "write");
    return op.init(buf, off, len);
  }

  /**
   * The contract's `tryWrite`: the bytes are taken at once, as a `write`
   * that finds nothing ahead of it and room for them would take them, or
   * none is. Taken in a slice of the run, they go with the sends of its
   * next `select`; taken from a Node callback, no `select` may come (the
   * run waits for I/O that these bytes cause), so they are submitted once
   * the callback is over unless a `select` did it first.
   */
  tryWrite(sock: Socket, buf: Uint8Array, off: number, len: number): boolean {
    const s = sock as S;
    if (s.state !== "connected" || s.sendShut || s.writing !== null || s.writers.length !== 0 || len <= 0) return false;
    if (!this.sendNow(s, buf, off, len)) return false;
    if (!this.#submitSoon) {
      this.#submitSoon = true;
      queueMicrotask(this.#submitLeft);
    }
    return true;
  }

  #submitSoon = false;
  readonly #submitLeft = (): void => {
    this.#submitSoon = false;
    try {
      this.submitQueued();
    } catch (error) {
      this.failure.fail(error as Error); // thrown by the next select: the run fails with it
    }
  };

  /** Submits the sends queued and not submitted yet, if any and unless the backend is destroyed (without waiting for anything). */
  protected abstract submitQueued(): void;

  accept(sock: Socket): B.Operation<[Socket, Address]> {
    return new this.#ops.Accept(this.io, sock as S, "accept");
  }

  recvfrom(sock: Socket, buf: Uint8Array, off: number, len: number): B.Operation<[number, Address]> {
    return new this.#ops.Recv(this.io, sock as S, "recvfrom").init(buf, off, len);
  }

  close(sock: Socket): B.Operation<void> {
    return new this.#ops.Close(this.io, sock as S, "close");
  }

  sendto(sock: Socket, buf: Uint8Array, off: number, len: number, addr: Address): B.Operation<number> {
    return new SendToOp(this.io, sock as S, buf, off, len, addr as InetAddress);
  }

  localAddress(sock: Socket): Address {
    const s = sock as S;
    if (s.fd >= 0) {
      const out: NativeAddressOut = {};
      if (this.io.sys.getsockname(s.fd, out) === 0) return s.kind === "unix" ? { path: out.path ?? "" } : (out as InetAddress);
    }
    throw new TypeError(`localAddress(): the ${s.kind} socket is not bound yet`);
  }

  /**
   * A connected pair of non-blocking, close-on-exec Unix stream sockets
   * (`pipe()`, a child's stdio), whose ends `adoptStream` takes.
   * @throws Error (Node-style, `socketpair`): `EMFILE`…
   */
  socketPair(): [number, number] {
    const pair = this.io.sys.socketpair(1);
    if (typeof pair === "number") throw errnoException(pair, "socketpair", "(pipe)");
    return pair;
  }

  /** A connected Unix socket of this backend over an end of `socketPair`, which it owns from now on. */
  adoptStream(fd: number): Socket {
    const s = this.make("unix");
    this.io.attach(s, fd);
    s.state = "connected";
    return s;
  }

  /**
   * Describes a listening socket for another domain: its fd (each domain
   * has its own, see `adopt`) and a guard made on the first share, sealed
   * before the fd is closed.
   */
  share(sock: Socket): SharedSocket {
    const s = sock as S;
    return describeListener(s, s.fd, this.localAddress(s), s.backlog);
  }

  /**
   * A listener of this domain over another domain's listening socket: a
   * `dup` of its fd made while the owner's guard is pinned, attached like
   * any listener's (closing it closes only that fd, and never unlinks a Unix
   * socket's file: the domain that bound it does). Domains race for each
   * connection; the losers' `accept` parks again. Already `closed` when the
   * owner closed its socket first.
   * @throws Error (Node-style, `dup`) when the descriptor cannot be duplicated.
   */
  adopt(shared: SharedSocket): Socket {
    const s = this.make(shared.kind);
    s.backlog = shared.backlog;
    const fd = adoptDescriptor(shared, (fd) => this.io.sys.dup(fd));
    if (fd === null) {
      s.state = "closed";
      return s;
    }
    if (fd < 0) throw errnoException(fd, "dup", "(adopting a listening socket from another domain)");
    this.io.attach(s, fd);
    s.state = "listening";
    return s;
  }
}
