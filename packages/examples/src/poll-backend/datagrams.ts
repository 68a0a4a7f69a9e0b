/** `recvfrom` and `sendto` on a UDP socket. */
import type * as B from "@bobbin/core";
import { type Address, type InetAddress, SocketClosed } from "@bobbin/unix";
import { checkTimeouts } from "@bobbin/unix/backend";
import type { PollSocket } from "./socket.js";

/**
 * `recvfrom`: one datagram, truncated to `len`.
 *
 * @example
 * ```ts
 * const [n, from] = yield* recvfrom(sock, buf, 0, buf.length);
 * ```
 * @throws the socket's error, SocketClosed, `Timeout`, `Cancelled`.
 */
export function* recvfrom(
  sock: PollSocket,
  buf: Uint8Array,
  off: number,
  len: number,
): Generator<B.Instruction, [number, Address], unknown> {
  checkTimeouts();
  for (;;) {
    if (sock.closed) throw new SocketClosed("recvfrom()");
    const d = sock.datagrams.shift();
    if (d !== undefined) {
      const n = Math.min(len, d.msg.length);
      buf.set(n === d.msg.length ? d.msg : d.msg.subarray(0, n), off);
      return [n, d.from];
    }
    const error = sock.error;
    if (error !== null) {
      sock.error = null;
      throw error;
    }
    yield* sock.poller.wait(sock, "readable", "recvfrom");
  }
}

/**
 * `sendto`: one datagram, done when Node's send callback says so (Node
 * binds a fresh socket at its first send, and resolves a name with the
 * socket's counted lookup).
 *
 * @example
 * ```ts
 * yield* sendto(sock, buf, 0, n, { host: "127.0.0.1", port: 9 });
 * ```
 * @throws `EMSGSIZE`, `ENOTFOUND`…, SocketClosed, `Timeout`, `Cancelled`.
 */
export function* sendto(
  sock: PollSocket,
  buf: Uint8Array,
  off: number,
  len: number,
  addr: Address,
): Generator<B.Instruction, number, unknown> {
  checkTimeouts();
  if (sock.closed) throw new SocketClosed("sendto()");
  const udp = sock.datagramSocket(true);
  if (sock.state === "fresh") sock.state = "bound";
  const { host, port } = addr as InetAddress;
  let sent = false;
  let failure: Error | null = null;
  udp.send(buf, off, len, port, host, (error) => {
    sent = true;
    failure = error;
    sock.acknowledged();
  });
  sock.unacknowledged++; // counted once handed over (the callback always comes later)
  for (;;) {
    yield* sock.poller.wait(sock, "writable", "sendto");
    if (sock.closed) throw new SocketClosed("sendto()");
    if (sent) {
      if (failure !== null) throw failure;
      return len;
    }
  }
}
