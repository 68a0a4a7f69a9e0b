import { once } from "node:events";
import * as tls from "node:tls";
import * as B from "@bobbin/core";
import { run } from "@bobbin/unix";
import { activeHandles } from "@bobbin/unix/conformance";
import { describe, expect, it } from "vitest";
import { selfSigned } from "../../src/support/self-signed.js";
import { exchange, listen, serve, stop } from "../../src/tls/echo.js";
import { handlesLeft } from "../support/net.js";
import { Program, runProgram } from "../support/processes.js";

const LOOPBACK = { host: "127.0.0.1", port: 0 };

describe("the TLS echo server, in process", () => {
  it("echoes every byte to many clients at once, messages of up to 256 KiB; stopped, it leaves no handle", async () => {
    const before = activeHandles();
    const credentials = selfSigned();
    const sizes = [1, 100, 4096, 65_537, 256 * 1024];
    const replies = await run(function* () {
      const server = yield* listen(credentials, LOOPBACK);
      const serving = B.spawn(serve, server);
      try {
        const clients = sizes.map((size, i) =>
          B.spawn(exchange, server.address, credentials.cert, "localhost", String.fromCharCode(97 + i).repeat(size)),
        );
        return (yield* B.awaitAll(clients)).map((r) => (r.ok ? r.value.length : r.error));
      } finally {
        yield* B.cancel(serving);
        yield* stop(server);
      }
    });
    expect(replies).toEqual(sizes);
    expect(await handlesLeft(before)).toEqual({});
  });

  it("a client that does not trust the certificate fails with the TLS error; the server serves on", async () => {
    const credentials = selfSigned();
    const stranger = selfSigned();
    const outcome = await run(function* () {
      const server = yield* listen(credentials, LOOPBACK);
      const serving = B.spawn(serve, server);
      try {
        let code: string | undefined;
        try {
          yield* exchange(server.address, stranger.cert, "localhost", "who are you?");
        } catch (error) {
          code = (error as NodeJS.ErrnoException).code;
        }
        const after = yield* exchange(server.address, credentials.cert, "localhost", "me again");
        return { code, after };
      } finally {
        yield* B.cancel(serving);
        yield* stop(server);
      }
    });
    expect(outcome.code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);
    expect(outcome.after).toBe("me again");
  });

  it("stopping closes the connections no task took", async () => {
    const credentials = selfSigned();
    const closed = await run(function* () {
      const server = yield* listen(credentials, LOOPBACK); // nobody accepts
      const client = tls.connect({ ...server.address, ca: credentials.cert, servername: "localhost" });
      yield* B.promise(() => once(client, "secureConnect"));
      const gone = once(client, "close");
      yield* stop(server);
      yield* B.promise(() => gone);
      return client.destroyed;
    });
    expect(closed).toBe(true);
  });
});

describe("node dist/tls-echo.js", () => {
  it("makes its certificate, serves its clients over TLS, checks every echo, stops, exits 0", async () => {
    const exit = await runProgram("tls-echo.js", ["--port", "0", "--clients", "25"]);
    expect(exit.stderr).toBe("");
    expect(exit.code).toBe(0);
    expect(exit.stdout).toMatch(/^certificate: self-signed for localhost and 127\.0\.0\.1, made now \(sha256 [0-9a-f]{16}…\)$/m);
    expect(exit.stdout).toMatch(/^25 TLS client\(s\): every echo checked, \d+ bytes$/m);
    expect(exit.stdout).toMatch(/server stopped\n$/);
  });

  it("--serve: serves until Ctrl-C, which closes everything and exits 130", async () => {
    const program = Program.start("tls-echo.js", ["--port", "0", "--serve"]);
    try {
      const [, fingerprint] = await program.waitFor(/sha256 ([0-9a-f]{16})…/);
      const [, port] = await program.waitFor(/TLS echo server on 127\.0\.0\.1:(\d+)/);
      // A plain Node client; it checks the certificate by the fingerprint the program printed.
      const client = tls.connect({ host: "127.0.0.1", port: Number(port), rejectUnauthorized: false });
      await once(client, "secureConnect");
      expect(client.getPeerCertificate().fingerprint256.replace(/:/g, "").toLowerCase().slice(0, 16)).toBe(fingerprint);
      client.write("ping");
      const [echoed] = await once(client, "data");
      expect(String(echoed)).toBe("ping");
      const closed = once(client, "close");
      program.child.kill("SIGINT");
      const exit = await program.end();
      await closed; // the server's end of the connection was closed with it
      expect(exit.code).toBe(130);
      expect(exit.stderr).toBe("");
      expect(exit.stdout).toMatch(/server stopped\n$/);
    } finally {
      program.kill();
    }
  });
});
