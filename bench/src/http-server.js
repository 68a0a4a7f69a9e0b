// The HTTP servers of bench/src/http.js, one per child process so each is
// measured alone, all answering the same two endpoints the same way:
//   GET /hello → "Hello, World!" (text/plain), GET /json → a 4 KiB JSON
//   document, serialized per request (application/json), keep-alive.
//
//   node http-server.js node               plain Node `http`
//   node http-server.js fastify            Fastify
//   node http-server.js bobbin <backend>   @bobbin/http's serve on libuv | native | uring
//
// Prints "PORT <n>" once listening; then the stdin protocol of
// echo-common.js's serveCommands ("cpu", "quit").

import http from "node:http";
import { loadCore, loadHttp, loadNative, loadUnix, serveCommands } from "./echo-common.js";

const mode = process.argv[2] ?? "node";
const backendName = process.argv[3] ?? "libuv";

/** A document of 4 KiB once serialized (4,092 bytes): 39 records of a user directory. */
const PAYLOAD = {
  users: Array.from({ length: 39 }, (_, i) => ({
    id: i + 1,
    name: `User number ${i + 1}`,
    email: `user${i + 1}@example.com`,
    active: i % 3 !== 0,
    roles: ["reader", i % 2 === 0 ? "writer" : "viewer"],
  })),
};
const HELLO = "Hello, World!";
const TEXT = "text/plain; charset=utf-8";
const JSON_TYPE = "application/json; charset=utf-8";

serveCommands();

if (mode === "node") {
  const server = http.createServer((req, res) => {
    if (req.url === "/json") {
      const body = JSON.stringify(PAYLOAD);
      res.writeHead(200, { "content-type": JSON_TYPE, "content-length": Buffer.byteLength(body) });
      res.end(body);
    } else {
      res.writeHead(200, { "content-type": TEXT, "content-length": HELLO.length });
      res.end(HELLO);
    }
  });
  server.listen(0, "127.0.0.1", () => process.stdout.write(`PORT ${server.address().port}\n`));
} else if (mode === "fastify") {
  const { default: Fastify } = await import("fastify");
  const app = Fastify({ logger: false });
  app.get("/hello", (_req, reply) => reply.type(TEXT).send(HELLO));
  app.get("/json", (_req, reply) => reply.type(JSON_TYPE).send(JSON.stringify(PAYLOAD)));
  await app.listen({ port: 0, host: "127.0.0.1" });
  process.stdout.write(`PORT ${app.server.address().port}\n`);
} else if (mode === "bobbin") {
  const U = await loadUnix();
  await loadCore();
  const H = await loadHttp();
  let backend = U.libuv;
  if (backendName === "native" || backendName === "uring") {
    const native = await loadNative();
    backend = backendName === "uring" ? native.uringBackend : native.nativeBackend;
  }
  await U.run(
    function* () {
      yield* H.serve({ port: 0, onListening: ({ port }) => process.stdout.write(`PORT ${port}\n`) }, function* handler(req, res) {
        if (req.url === "/json") yield* res.send(PAYLOAD);
        else yield* res.send(HELLO);
      });
    },
    { backend },
  );
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
