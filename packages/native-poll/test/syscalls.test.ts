import { existsSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Address, checkErrno, Errno, errnoException, errnoName, PollEvent, Poller, syscalls as sys } from "../src/backend/index.js";

/** Blocks (briefly) until `fd` reports one of `events`. */
function waitFor(fd: number, events: number): number {
  let got = 0;
  const poller = new Poller((_fd, ev) => (got |= ev), { ref: false });
  try {
    poller.add(fd, events, "level");
    for (let i = 0; i < 100 && got === 0; i++) poller.poll(20);
  } finally {
    poller.destroy();
  }
  return got;
}

function listener(addr: Address, kind: "tcp4" | "tcp6" | "unix" = "tcp4"): { fd: number; addr: Address } {
  const fd = checkErrno(sys.socket(kind), "socket");
  if (kind !== "unix") checkErrno(sys.setsockopt(fd, sys.sockopts().SOL_SOCKET!, sys.sockopts().SO_REUSEADDR!, 1), "setsockopt");
  checkErrno(sys.bind(fd, addr), "bind");
  checkErrno(sys.listen(fd, 16), "listen");
  const local = sys.localAddress(fd);
  if (typeof local === "number") throw errnoException(local, "getsockname");
  return { fd, addr: local };
}

function connectPair(kind: "tcp4" | "tcp6" | "unix", addr: Address): { server: number; client: number; accepted: number } {
  const { fd: server, addr: bound } = listener(addr, kind);
  const client = checkErrno(sys.socket(kind), "socket");
  const rc = sys.connect(client, bound);
  if (rc === Errno.EINPROGRESS) {
    expect(waitFor(client, PollEvent.WRITABLE) & PollEvent.WRITABLE).toBeTruthy();
    checkErrno(sys.socketError(client), "connect");
  } else {
    checkErrno(rc, "connect");
  }
  expect(waitFor(server, PollEvent.READABLE) & PollEvent.READABLE).toBeTruthy();
  const from: { address?: Address } = {};
  const accepted = checkErrno(sys.accept(server, from), "accept");
  if (kind === "unix") expect(from.address).toEqual({ path: "" });
  else expect(from.address).toEqual(sys.localAddress(client));
  return { server, client, accepted };
}

describe("syscalls: dup", () => {
  it("a close-on-exec duplicate of a listening socket accepts what the original's queue holds, after the original closed", () => {
    const { fd: server, addr } = listener({ host: "127.0.0.1", port: 0 });
    const copy = checkErrno(sys.dup(server), "dup");
    expect(copy).not.toBe(server);
    expect(sys.localAddress(copy)).toEqual(addr);
    checkErrno(sys.close(server), "close");
    const client = checkErrno(sys.socket("tcp4"), "socket");
    const rc = sys.connect(client, addr);
    if (rc !== Errno.EINPROGRESS) checkErrno(rc, "connect");
    expect(waitFor(copy, PollEvent.READABLE) & PollEvent.READABLE).toBeTruthy();
    const accepted = checkErrno(sys.accept(copy), "accept");
    expect(sys.accept(copy)).toBe(Errno.EAGAIN); // still non-blocking: the flag is the open file's
    for (const fd of [accepted, client, copy]) sys.close(fd);
    expect(sys.dup(copy)).toBe(Errno.EBADF);
    expect(() => sys.dup("3" as unknown as number)).toThrow(TypeError);
  });
});

describe("syscalls: TCP", () => {
  it("socket, bind, listen, accept, connect, read, write, shutdown, close", () => {
    const { server, client, accepted } = connectPair("tcp4", { host: "127.0.0.1", port: 0 });
    try {
      expect(sys.accept(server)).toBe(Errno.EAGAIN); // nothing else pending
      expect(sys.write(accepted, Buffer.from("x"))).toBe(1);
      expect(waitFor(client, PollEvent.READABLE)).toBeTruthy();
      expect(sys.read(client, Buffer.alloc(4))).toBe(1);
      expect(sys.read(accepted, Buffer.alloc(4))).toBe(Errno.EAGAIN);
      expect(sys.write(client, Buffer.from("hello world"), 0, 5)).toBe(5);
      expect(waitFor(accepted, PollEvent.READABLE)).toBeTruthy();
      const buf = Buffer.alloc(16);
      expect(sys.read(accepted, buf, 2, 10)).toBe(5);
      expect(buf.subarray(2, 7).toString()).toBe("hello");
      const peer = sys.peerAddress(accepted) as { host: string; port: number };
      expect(peer.host).toBe("127.0.0.1");
      expect(peer).toEqual(sys.localAddress(client));

      expect(sys.writev(accepted, [Buffer.from("ab"), Buffer.from("cde")])).toBe(5);
      waitFor(client, PollEvent.READABLE);
      const x = Buffer.alloc(2);
      const y = Buffer.alloc(10);
      expect(sys.readv(client, [x, y])).toBe(5);
      expect(x.toString() + y.subarray(0, 3).toString()).toBe("abcde");

      expect(sys.shutdown(client, "send")).toBe(0);
      waitFor(accepted, PollEvent.READABLE);
      expect(sys.read(accepted, buf)).toBe(0); // end of stream
      expect(sys.write(client, Buffer.from("x"))).toBe(Errno.EPIPE); // no SIGPIPE
    } finally {
      expect(sys.close(accepted)).toBe(0);
      expect(sys.close(client)).toBe(0);
      expect(sys.close(server)).toBe(0);
    }
    expect(sys.close(server)).toBe(Errno.EBADF);
  });

  it("a refused connection is reported by socketError", () => {
    const { fd, addr } = listener({ host: "127.0.0.1", port: 0 });
    sys.close(fd); // nobody listens there now
    const client = checkErrno(sys.socket("tcp4"), "socket");
    try {
      const rc = sys.connect(client, addr);
      if (rc === Errno.EINPROGRESS) {
        waitFor(client, PollEvent.WRITABLE);
        expect(sys.socketError(client)).toBe(Errno.ECONNREFUSED);
      } else {
        expect(rc).toBe(Errno.ECONNREFUSED);
      }
    } finally {
      sys.close(client);
    }
  });

  it("EADDRINUSE, and EINVAL for a host that is not numeric", () => {
    const { fd, addr } = listener({ host: "127.0.0.1", port: 0 });
    const other = checkErrno(sys.socket("tcp4"), "socket");
    try {
      expect(sys.bind(other, addr)).toBe(Errno.EADDRINUSE);
      expect(sys.bind(other, { host: "localhost", port: 0 })).toBe(Errno.EINVAL);
    } finally {
      sys.close(other);
      sys.close(fd);
    }
  });

  it("socket options", () => {
    const o = sys.sockopts();
    const fd = checkErrno(sys.socket("tcp4"), "socket");
    try {
      expect(sys.getsockopt(fd, o.IPPROTO_TCP!, o.TCP_NODELAY!)).toBe(0);
      expect(sys.setsockopt(fd, o.IPPROTO_TCP!, o.TCP_NODELAY!, 1)).toBe(0);
      expect(sys.getsockopt(fd, o.IPPROTO_TCP!, o.TCP_NODELAY!)).not.toBe(0);
      expect(errnoName(sys.getsockopt(fd, o.SOL_SOCKET!, 987654))).toBe("ENOPROTOOPT");
    } finally {
      sys.close(fd);
    }
  });

  it("IPv6 on ::1", () => {
    const { server, client, accepted } = connectPair("tcp6", { host: "::1", port: 0 });
    try {
      const local = sys.localAddress(server) as { host: string; port: number };
      expect(local.host).toBe("::1");
      expect(sys.write(client, Buffer.from("v6"))).toBe(2);
      waitFor(accepted, PollEvent.READABLE);
      expect(sys.read(accepted, Buffer.alloc(4))).toBe(2);
    } finally {
      sys.close(accepted);
      sys.close(client);
      sys.close(server);
    }
  });
});

describe("syscalls: Unix sockets and UDP", () => {
  it("a Unix stream socket at a path", () => {
    const path = join(tmpdir(), `bobbin-native-${process.pid}.sock`);
    if (existsSync(path)) unlinkSync(path);
    const { server, client, accepted } = connectPair("unix", { path });
    try {
      expect(sys.localAddress(server)).toEqual({ path });
      expect(sys.write(accepted, Buffer.from("unix"))).toBe(4);
      waitFor(client, PollEvent.READABLE);
      const b = Buffer.alloc(8);
      expect(sys.read(client, b)).toBe(4);
    } finally {
      sys.close(accepted);
      sys.close(client);
      sys.close(server);
      unlinkSync(path);
    }
  });

  it.skipIf(process.platform !== "linux")(
    `a Linux abstract Unix socket${process.platform === "linux" ? "" : ` (skipped: abstract sockets are Linux's; this is ${process.platform})`}`,
    () => {
      const path = `\0bobbin-native-${process.pid}`;
      const { server, client, accepted } = connectPair("unix", { path });
      expect(sys.localAddress(server)).toEqual({ path });
      for (const fd of [accepted, client, server]) sys.close(fd);
    },
  );

  it("sendto and recvfrom carry addresses", () => {
    const a = checkErrno(sys.socket("udp4"), "socket");
    const b = checkErrno(sys.socket("udp4"), "socket");
    try {
      checkErrno(sys.bind(a, { host: "127.0.0.1", port: 0 }), "bind");
      const aAddr = sys.localAddress(a) as Address;
      const buf = Buffer.alloc(64);
      expect(sys.recvfrom(a, buf)).toBe(Errno.EAGAIN);
      expect(sys.sendto(b, Buffer.from("datagram"), 0, 8, aAddr)).toBe(8);
      waitFor(a, PollEvent.READABLE);
      const from: { address?: Address } = {};
      expect(sys.recvfrom(a, buf, 0, 4, from)).toBe(4); // truncated
      expect(buf.subarray(0, 4).toString()).toBe("data");
      expect(from.address).toEqual({ host: "127.0.0.1", port: (sys.localAddress(b) as { port: number }).port });
    } finally {
      sys.close(a);
      sys.close(b);
    }
  });
});

describe("syscalls: errors and misuse", () => {
  it("negative errnos name themselves and become Node-style errors", () => {
    expect(sys.read(987654, Buffer.alloc(1))).toBe(Errno.EBADF);
    expect(errnoName(Errno.EAGAIN)).toBe("EAGAIN");
    const e = errnoException(Errno.ECONNRESET, "read");
    expect(e).toMatchObject({ message: "read ECONNRESET", code: "ECONNRESET", errno: Errno.ECONNRESET, syscall: "read" });
    expect(() => checkErrno(Errno.EBADF, "close")).toThrow(expect.objectContaining({ code: "EBADF", syscall: "close" }));
    expect(checkErrno(3, "x")).toBe(3);
    expect(() => errnoName(1)).toThrow(RangeError);
  });

  it("wrong arguments throw at once", () => {
    expect(() => sys.read("1" as never, Buffer.alloc(1))).toThrow(TypeError);
    expect(() => sys.read(0, "abc" as never)).toThrow(TypeError);
    expect(() => sys.read(0, Buffer.alloc(4), 5)).toThrow(RangeError);
    expect(() => sys.write(1, Buffer.alloc(4), 2, 3)).toThrow(RangeError);
    expect(() => sys.socket("sctp" as never)).toThrow(TypeError);
    expect(() => sys.bind(0, { host: "127.0.0.1", port: 70000 })).toThrow(TypeError);
    expect(() => sys.shutdown(0, "sideways" as never)).toThrow(TypeError);
    expect(() => sys.writev(0, [1] as never)).toThrow(TypeError);
  });
});
