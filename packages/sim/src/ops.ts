/**
 * The simulated backend's operations, each a `Parked` of `@bobbin/unix`'s
 * kit: an attempt in the task's fiber, and when it cannot complete, a
 * registration with the socket (or the agenda) that `ready()` ends, waking
 * the task. Reads are the kit's `ReadOp` over a connection's received bytes.
 */
import { type Address, type InetAddress, SocketClosed } from "@bobbin/unix";
import { BufferOp, Parked, systemError } from "@bobbin/unix/backend";
import type { Clock, Event } from "./clock.js";
import type { Letter } from "./datagram.js";
import type { Inbox } from "./inbox.js";
import type { Admitted } from "./listener.js";
import { Lookup } from "./lookup.js";
import type { Destination } from "./network.js";
import type { SimSocket } from "./socket.js";
import type { Endpoint } from "./stream.js";
import type { World } from "./world.js";

/** `write(sock, buf, off, len)`: as many bytes as the window takes, then the rest as the peer reads. Each end keeps one to reuse. */
export class WriteOp extends BufferOp<void> {
  #sent = 0;

  constructor(private readonly endpoint: Endpoint) {
    super("write");
  }

  override init(buf: Uint8Array, off: number, len: number): this {
    this.#sent = 0;
    return super.init(buf, off, len);
  }

  protected attempt(): boolean {
    const e = this.endpoint;
    if (e.socket.state === "closed") throw new SocketClosed("write()");
    if (e.error !== null) throw systemError("EPIPE", "write", "the connection was reset by the peer");
    if (e.sendShut) throw systemError("EPIPE", "write", "the socket was shut down for sending");
    while (this.#sent < this.len) {
      const room = e.room;
      if (room <= 0) return false;
      const n = Math.min(room, this.len - this.#sent);
      e.send(this.buf, this.off + this.#sent, n);
      this.#sent += n;
    }
    return true;
  }

  protected wait(): void {
    this.endpoint.writers.add(this);
  }

  protected leave(): void {
    this.endpoint.writers.leave(this);
  }
}

/** An operation that takes what arrives in an inbox (a connection, a datagram), waiting while it is empty. */
abstract class InboxOp<T, R> extends BufferOp<R> {
  protected abstract get inbox(): Inbox<T>;

  protected wait(): void {
    this.inbox.waiters.add(this);
  }

  protected leave(): void {
    this.inbox.waiters.leave(this);
  }
}

/** `accept(sock)`: the oldest connection of the listener's queue. */
export class AcceptOp extends InboxOp<Admitted<SimSocket>, [SimSocket, Address]> {
  constructor(private readonly sock: SimSocket) {
    super("accept");
  }

  protected get inbox(): Inbox<Admitted<SimSocket>> {
    return this.sock.listener!.inbox;
  }

  protected attempt(): boolean {
    if (this.sock.state === "closed") throw new SocketClosed("accept()");
    const admitted = this.inbox.take();
    if (admitted === undefined) return false;
    this.value = [admitted.socket, admitted.end.remote];
    return true;
  }
}

/** `recvfrom(sock, buf, off, len)`: the oldest datagram of the socket's inbox, truncated to `len`. */
export class RecvOp extends InboxOp<Letter, [number, Address]> {
  constructor(private readonly sock: SimSocket) {
    super("recvfrom");
  }

  protected get inbox(): Inbox<Letter> {
    return this.sock.mailbox!;
  }

  protected attempt(): boolean {
    if (this.sock.state === "closed") throw new SocketClosed("recvfrom()");
    const letter = this.inbox.take();
    if (letter === undefined) return false;
    const n = Math.min(this.len, letter.bytes.length);
    this.buf.set(n === letter.bytes.length ? letter.bytes : letter.bytes.subarray(0, n), this.off);
    this.value = [n, { host: letter.from.host, port: letter.from.port }];
    return true;
  }
}

/**
 * `connect(sock, addr)`: looks the host up, sends the SYN, then waits for
 * the SYN-ACK, a refusal or the last retry.
 */
export class ConnectOp extends Parked<void> {
  #lookup: Lookup | null = null;
  #endpoint: Endpoint | null = null;

  constructor(
    private readonly world: World,
    private readonly sock: SimSocket,
    private readonly address: Address,
  ) {
    super("connect");
  }

  protected attempt(): boolean {
    const sock = this.sock;
    if (sock.state === "closed") throw new SocketClosed("connect()");
    if (this.#endpoint === null) {
      let to: Destination | null = null;
      if (!sock.isUnix) {
        this.#lookup ??= new Lookup(this.world, sock.host, (this.address as InetAddress).host, sock.family, "connect");
        if (!this.#lookup.done) return false;
        to = this.#lookup.take();
      }
      this.#endpoint = sock.connect(this.address, to);
    }
    if (sock.state === "connected") return true;
    if (sock.state === "fresh") throw this.#endpoint.error!;
    return false;
  }

  protected wait(): void {
    if (this.#endpoint === null) this.#lookup!.await(this);
    else this.#endpoint.connector = this;
  }

  protected leave(): void {
    if (this.#endpoint === null) this.#lookup!.cancel();
    else if (this.#endpoint.connector === this) this.#endpoint.connector = null;
  }
}

/** `sendto(sock, buf, off, len, addr)`: looks the host up, then sends one datagram. */
export class SendToOp extends Parked<number> {
  readonly #lookup: Lookup;

  constructor(
    world: World,
    private readonly sock: SimSocket,
    private readonly buf: Uint8Array,
    private readonly off: number,
    private readonly len: number,
    private readonly address: InetAddress,
  ) {
    super("sendto");
    this.#lookup = new Lookup(world, sock.host, address.host, sock.family, "sendto");
  }

  protected attempt(): boolean {
    if (this.sock.state === "closed") throw new SocketClosed("sendto()");
    if (!this.#lookup.done) return false;
    this.value = this.sock.send(this.buf, this.off, this.len, this.#lookup.take(), this.address.port);
    return true;
  }

  protected wait(): void {
    this.#lookup.await(this);
  }

  protected leave(): void {
    this.#lookup.cancel();
  }
}

/**
 * An operation that completes (or fails) at its first attempt: it never
 * waits, but still starts like every operation (an expired `withTimeout`
 * scope fails it).
 */
export class InstantOp<T> extends Parked<T> {
  constructor(
    label: string,
    private readonly run: () => T,
  ) {
    super(label);
  }

  protected attempt(): boolean {
    this.value = this.run();
    return true;
  }

  protected wait(): void {}

  protected leave(): void {}
}

/** `sleep(ms)`: an event of the agenda (0 lets the other ready tasks run first); `Infinity` waits for cancellation. */
export class SleepOp extends Parked<void> implements Event {
  at = 0;
  heapIndex = -1;
  #expired = false;

  constructor(
    private readonly clock: Clock,
    private readonly ms: number,
  ) {
    super("sleep");
  }

  protected attempt(): boolean {
    return this.#expired;
  }

  protected wait(): void {
    // sleep(0) wakes at this instant's next turn of the world, so that the other ready tasks run first.
    if (this.ms !== Infinity) this.clock.schedule(this, this.clock.now + this.ms);
  }

  protected leave(): void {
    this.clock.cancel(this);
  }

  fire(): void {
    this.#expired = true;
    this.ready();
  }
}
