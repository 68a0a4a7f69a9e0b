/**
 * A test client on loopback: connects, sends, and reads what comes back,
 * with time limits on every wait.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { delay, procFds } from "@bobbin/test-support";
import { activeHandles, leaked } from "@bobbin/unix/conformance";

/** A TCP connection to `host:port` (Nagle off), once it is made. */
export function connected(port: number, host = "127.0.0.1"): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host, noDelay: true }, () => {
      socket.off("error", reject);
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

/** The inodes of the sockets process `pid` holds. */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (link.startsWith("socket:[")) inodes.add(link.slice(8, -1));
    } catch {
      // closed since the listing
    }
  }
  return inodes;
}

/** A row of `/proc/net/tcp` or `tcp6`: the ports in hexadecimal as written there. */
interface TcpRow {
  readonly localPort: string;
  readonly remotePort: string;
  readonly state: string;
  readonly txQueue: number;
  readonly rxQueue: number;
  readonly inode: string;
}

function tcpRows(): TcpRow[] {
  const rows: TcpRow[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const [, local, remote, state, queues, , , , , inode] = line.trim().split(/\s+/);
      if (inode === undefined) continue;
      const [tx, rx] = queues!.split(":");
      rows.push({
        localPort: local!.split(":").pop()!,
        remotePort: remote!.split(":").pop()!,
        state: state!,
        txQueue: Number.parseInt(tx!, 16),
        rxQueue: Number.parseInt(rx!, 16),
        inode,
      });
    }
  }
  return rows;
}

const hex = (port: number): string => port.toString(16).toUpperCase().padStart(4, "0");

/**
 * Whether process `pid` (any of its threads) holds a TCP socket listening on
 * `port`: its descriptors' sockets looked up in `/proc/net/tcp` and `tcp6`.
 * Asked of the process rather than of the port, which another process may
 * listen on once this one let it go (tests run side by side); null where
 * there is no `/proc`.
 */
export function listensOn(pid: number, port: number): boolean | null {
  if (!procFds) return null;
  const inodes = socketInodes(pid);
  return tcpRows().some((row) => row.state === "0A" && row.localPort === hex(port) && inodes.has(row.inode));
}

/**
 * Whether process `pid` has accepted the connection of `client` (a loopback
 * socket of this process) and read everything sent on it: the kernel
 * delivered all of it (nothing unacknowledged on the client's side), and the
 * server's end of it, held by `pid`, has nothing left to read. Null where
 * there is no `/proc`.
 */
export function hasRead(pid: number, client: Socket): boolean | null {
  if (!procFds) return null;
  const ours = hex(client.localPort!);
  const theirs = hex(client.remotePort!);
  const rows = tcpRows();
  const sent = rows.find((row) => row.localPort === ours && row.remotePort === theirs);
  const inodes = socketInodes(pid);
  const served = rows.find((row) => row.localPort === theirs && row.remotePort === ours && inodes.has(row.inode));
  return sent !== undefined && sent.txQueue === 0 && served !== undefined && served.rxQueue === 0;
}

/**
 * A test client's connection: what arrives goes to `receive`, and each
 * arrival (or the close) wakes the waits registered with `onChange`.
 */
export abstract class TestConnection {
  /** Settles when the server ended the connection (or it failed). */
  readonly closed: Promise<void>;
  ended = false;
  private waiters: (() => void)[] = [];

  protected constructor(readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.receive(chunk);
      this.notify();
    });
    this.closed = new Promise((resolve) => {
      socket.on("close", () => {
        this.ended = true;
        this.notify();
        resolve();
      });
    });
    socket.on("error", () => undefined);
  }

  /** Keeps a chunk that arrived. */
  protected abstract receive(chunk: Buffer): void;

  /** Calls `check` once at the next arrival or at the close. */
  protected onChange(check: () => void): void {
    this.waiters.push(check);
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** A TCP client that keeps everything it received. */
export class Client extends TestConnection {
  private received = Buffer.alloc(0);

  protected receive(chunk: Buffer): void {
    this.received = Buffer.concat([this.received, chunk]);
  }

  /** Connects to `127.0.0.1:port` (or `host`). */
  static async connect(port: number, host = "127.0.0.1"): Promise<Client> {
    return new Client(await connected(port, host));
  }

  /** Everything received so far, as text. */
  get text(): string {
    return this.received.toString();
  }

  /** Sends `data`. */
  send(data: string | Uint8Array): void {
    this.socket.write(data);
  }

  /** Ends this side of the connection (`nc -q0` after its input). */
  end(): void {
    this.socket.end();
  }

  /** Closes the connection at once. */
  destroy(): void {
    this.socket.destroy();
  }

  /**
   * Waits until `predicate(text)` holds; rejects after `ms` milliseconds
   * with what was received.
   */
  waitFor(predicate: (text: string) => boolean, ms = 5000): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms; received ${JSON.stringify(this.text)}`)), ms);
      const check = (): void => {
        if (predicate(this.text)) {
          clearTimeout(timer);
          resolve(this.text);
        } else if (this.ended) {
          clearTimeout(timer);
          reject(new Error(`connection closed; received ${JSON.stringify(this.text)}`));
        } else this.onChange(check);
      };
      check();
    });
  }

  /** Waits until `n` bytes in all were received. */
  waitForBytes(n: number, ms = 5000): Promise<string> {
    return this.waitFor(() => this.received.length >= n, ms);
  }

  /** Sends `text` and waits until everything sent so far came back. */
  async roundTrip(text: string, ms = 5000): Promise<void> {
    const expected = this.text.length + text.length;
    this.send(text);
    await this.waitFor((t) => t.length >= expected, ms);
  }
}

/**
 * The process's open descriptors once the count stopped moving (sockets of
 * earlier tests may still be closing): two equal reads 20 ms apart, within 1 s.
 */
export async function settledFds(read: () => number | null): Promise<number | null> {
  let last = read();
  for (let i = 0; i < 50; i++) {
    await delay(20);
    const now = read();
    if (now === last) return now;
    last = now;
  }
  return last;
}

/**
 * The kinds of Node handles opened since `before` and still open, once
 * Node's loop has had up to `ms` to finish closing what is closing (a
 * server's handle outlives its 'close' event by a turn of the loop, a
 * socket disposed with `using` closes without being waited for). Empty when
 * nothing leaked.
 */
export async function handlesLeft(before: Record<string, number>, ms = 2000): Promise<Record<string, number>> {
  const until = Date.now() + ms;
  for (;;) {
    const left = leaked(before, activeHandles());
    if (Object.keys(left).length === 0 || Date.now() > until) return left;
    await delay(20);
  }
}
