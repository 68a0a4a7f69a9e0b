import { spawn } from "node:child_process";
import { once } from "node:events";
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";
import * as B from "@bobbin/core";
import { failure, thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import {
  accept,
  bindAndListen,
  close,
  connect,
  fromStream,
  getsockname,
  read,
  readExactly,
  recvfrom,
  run,
  type Socket,
  shutdown,
  sleep,
  write,
} from "../../src/index.js";

/** Reads `sock` to its end. */
function* readAll(sock: Socket): Generator<B.Instruction, Buffer, unknown> {
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(4096);
  for (let n: number; (n = yield* read(sock, buf)) > 0; ) chunks.push(Buffer.from(buf.subarray(0, n)));
  return Buffer.concat(chunks);
}

describe("fromStream: what it takes", () => {
  it("a Node stream in byte mode, once", () => {
    expect(thrownBy(() => fromStream(42 as never))).toBeInstanceOf(TypeError);
    expect(thrownBy(() => fromStream({ on() {}, destroy() {} } as never))).toBeInstanceOf(TypeError);
    expect(thrownBy(() => fromStream(Readable.from(["objects"])))).toBeInstanceOf(TypeError);
    expect(thrownBy(() => fromStream(new Writable({ objectMode: true })))).toBeInstanceOf(TypeError);
    const text = new PassThrough();
    text.setEncoding("utf8");
    expect(String(thrownBy(() => fromStream(text)))).toMatch(/setEncoding/);
    const pipe = new PassThrough();
    const sock = fromStream(pipe);
    expect(String(thrownBy(() => fromStream(pipe)))).toMatch(/a socket already/);
    sock[Symbol.dispose]();
  });

  it("the operations a connected stream socket has not: accept, connect, bindAndListen, recvfrom", async () => {
    await run(function* () {
      const sock = fromStream(new PassThrough());
      expect(thrownBy(() => accept(sock))).toBeInstanceOf(TypeError);
      expect((thrownBy(() => connect(sock, { host: "127.0.0.1", port: 1 })) as NodeJS.ErrnoException).code).toBe("EISCONN");
      expect(thrownBy(() => bindAndListen(sock, { host: "127.0.0.1", port: 0 }))).toBeInstanceOf(TypeError);
      expect(thrownBy(() => recvfrom(sock, Buffer.alloc(1)))).toBeInstanceOf(TypeError);
      expect(thrownBy(() => getsockname(sock))).toBeInstanceOf(TypeError); // a PassThrough has no address
      yield* close(sock);
    });
  });
});

describe("fromStream over Node's own streams", () => {
  it("child process stdio: writes its stdin, reads its stdout to the end", async () => {
    const out = await run(function* () {
      const child = spawn(process.execPath, ["-e", "process.stdin.on('data', (d) => process.stdout.write(String(d).toUpperCase()))"], {
        stdio: ["pipe", "pipe", "inherit"],
      });
      const exited = once(child, "exit");
      const input = fromStream(child.stdin);
      const output = fromStream(child.stdout);
      try {
        yield* write(input, "shout this\n");
        shutdown(input, "send");
        const text = (yield* readAll(output)).toString();
        const [code] = yield* B.promise(() => exited);
        return { text, code };
      } finally {
        yield* close(input);
        yield* close(output);
      }
    });
    expect(out).toEqual({ text: "SHOUT THIS\n", code: 0 });
  });

  it("fs streams: a file written through one socket reads back through another", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bobbin-stream-"));
    try {
      const file = join(dir, "data.bin");
      const data = Buffer.alloc(200_000);
      for (let i = 0; i < data.length; i++) data[i] = (i * 7) & 0xff;
      const back = await run(function* () {
        const sink = createWriteStream(file);
        const out = fromStream(sink);
        for (let off = 0; off < data.length; off += 30_000) yield* write(out, data, off, Math.min(30_000, data.length - off));
        shutdown(out, "send");
        yield* B.promise(() => once(sink, "close"));
        yield* close(out);
        using input = fromStream(createReadStream(file, { highWaterMark: 8192 }));
        return yield* readAll(input);
      });
      expect(back.equals(data)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("HTTP bodies: a request body written, a response body read (a Node server on loopback)", async () => {
    const server = http.createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (d: string) => (body += d));
      req.on("end", () => res.end(`got ${body.length} bytes: ${body}`));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as net.AddressInfo;
    try {
      const reply = await run(function* () {
        const req = http.request({ host: "127.0.0.1", port, method: "POST", agent: false });
        const responded = once(req, "response") as Promise<[http.IncomingMessage]>;
        const body = fromStream(req);
        yield* write(body, "ping ");
        yield* write(body, "pong");
        shutdown(body, "send");
        const [res] = yield* B.promise(() => responded);
        using response = fromStream(res);
        const text = (yield* readAll(response)).toString();
        yield* close(body);
        return { status: res.statusCode, text };
      });
      expect(reply).toEqual({ status: 200, text: "got 9 bytes: ping pong" });
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });

  it("a net.Socket: getsockname says its local address; the peer reads what was written", async () => {
    const peerData: Buffer[] = [];
    const server = net.createServer((c) => {
      c.on("data", (d) => peerData.push(d));
      c.on("end", () => c.end("bye"));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as net.AddressInfo;
    try {
      const answer = await run(function* () {
        const conn = net.connect({ host: "127.0.0.1", port });
        yield* B.promise(() => once(conn, "connect"));
        using sock = fromStream(conn);
        expect(getsockname(sock)).toEqual({ host: "127.0.0.1", port: conn.localPort });
        yield* write(sock, "hello");
        shutdown(sock, "send");
        const buf = Buffer.alloc(3);
        yield* readExactly(sock, buf);
        expect(yield* read(sock, Buffer.alloc(1))).toBe(0);
        return buf.toString();
      });
      expect(answer).toBe("bye");
      expect(Buffer.concat(peerData).toString()).toBe("hello");
    } finally {
      server.close();
    }
  });

  it("half-open, as sockets are: after the peer's end, this side still writes (even over a net.Socket made with allowHalfOpen: false)", async () => {
    let heard: (text: string) => void = () => {};
    const answer = new Promise<string>((resolve) => (heard = resolve));
    const server = net.createServer({ allowHalfOpen: true }, (c) => {
      let got = "";
      c.on("data", (d) => (got += d));
      c.on("end", () => heard(got));
      c.end("question"); // and the server's end of stream
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as net.AddressInfo;
    try {
      const question = await run(function* () {
        const conn = net.connect({ host: "127.0.0.1", port, allowHalfOpen: false });
        using sock = fromStream(conn);
        const text = (yield* readAll(sock)).toString(); // to the peer's end
        yield* sleep(0.05); // Node would have ended this side by now
        yield* write(sock, "late answer");
        shutdown(sock, "send");
        yield* B.promise(() => answer);
        return text;
      });
      expect(question).toBe("question");
      expect(await answer).toBe("late answer");
    } finally {
      server.close();
    }
  });

  it("a connection reset by the peer is the error of the read", async () => {
    const server = net.createServer((c) => c.resetAndDestroy());
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as net.AddressInfo;
    try {
      const code = await run(function* () {
        const conn = net.connect({ host: "127.0.0.1", port });
        using sock = fromStream(conn);
        return (yield* failure(() => readAll(sock))).code;
      });
      expect(code).toBe("ECONNRESET");
    } finally {
      server.close();
    }
  });
});
