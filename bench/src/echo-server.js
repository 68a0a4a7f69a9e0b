// The echo servers of bench/src/echo.js, one per child process so each is
// measured alone: `node echo-server.js net` (plain Node `net`, 'data' →
// write) or `node echo-server.js bobbin [flush] [recorder]` (@bobbin/unix on its
// libuv backend: accept loop + one fiber per connection doing read → write;
// `recorder`: with run's flightRecorder, a ring of 4,096 kernel events), or
// `node echo-server.js bobbin-store [flush]` (the same, each connection's
// fiber entering an AsyncLocalStorage store first: its steps run in it).
//
// Prints "PORT <n>" once listening. On stdin, the protocol of
// echo-common.js's serveCommands: "cpu" → prints "CPU <user µs> <system µs>"
// (process.cpuUsage()); "dump" → "DUMP <JSON string>" (the Bobbin servers'
// task tree); "quit" → exits.

import { AsyncLocalStorage } from "node:async_hooks";
import net from "node:net";
import { bufferEcho, loadCore, loadUnix, serveBobbin, serveCommands } from "./echo-common.js";

const mode = process.argv[2] ?? "net";
const flush = process.argv[3] ?? "immediate";

serveCommands();

if (mode === "net") {
  const server = net.createServer((socket) => {
    socket.on("data", (data) => socket.write(data));
    socket.on("error", () => {});
  });
  server.listen(0, "127.0.0.1", () => process.stdout.write(`PORT ${server.address().port}\n`));
} else if (mode === "bobbin") {
  const U = await loadUnix();
  const B = await loadCore();
  const options = process.argv[4] === "recorder" ? { flightRecorder: 4096 } : {};
  await serveBobbin(U, B, { backend: () => U.libuv({ flush }), body: bufferEcho(U), options });
} else if (mode === "bobbin-store") {
  const U = await loadUnix();
  const B = await loadCore();
  const als = new AsyncLocalStorage();
  const echo = bufferEcho(U);
  let connections = 0;
  function* inStore(client) {
    als.enterWith({ connection: ++connections });
    return yield* echo(client);
  }
  await serveBobbin(U, B, { backend: () => U.libuv({ flush }), body: inStore });
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
