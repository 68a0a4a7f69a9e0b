// The echo servers of bench/src/echo.js, one per child process so each is
// measured alone: `node echo-server.js net` (plain Node `net`, 'data' →
// write) or `node echo-server.js bobbin [flush]` (@bobbin/unix on its libuv
// backend: accept loop + one fiber per connection doing read → write).
//
// Prints "PORT <n>" once listening. On stdin: "cpu" → prints
// "CPU <user µs> <system µs>" (process.cpuUsage()); "quit" → exits.

import net from "node:net";
import { createInterface } from "node:readline";

const mode = process.argv[2] ?? "net";
const flush = process.argv[3] ?? "immediate";

createInterface({ input: process.stdin }).on("line", (line) => {
  if (line === "cpu") {
    const { user, system } = process.cpuUsage();
    process.stdout.write(`CPU ${user} ${system}\n`);
  } else if (line === "quit") process.exit(0);
});

async function loadBobbin() {
  const candidates = [process.env.BOBBIN_UNIX, "@bobbin/unix", new URL("../../packages/unix/dist/index.js", import.meta.url).href];
  let lastError;
  for (const spec of candidates) {
    if (!spec) continue;
    try {
      return await import(spec);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

if (mode === "net") {
  const server = net.createServer((socket) => {
    socket.on("data", (data) => socket.write(data));
    socket.on("error", () => {});
  });
  server.listen(0, "127.0.0.1", () => process.stdout.write(`PORT ${server.address().port}\n`));
} else if (mode === "bobbin") {
  const U = await loadBobbin();
  const B = await import("@bobbin/core");

  function* echo(client) {
    const buf = Buffer.allocUnsafe(4096);
    try {
      for (let n; (n = yield* U.read(client, buf)) > 0; ) yield* U.write(client, buf, 0, n);
    } catch {
      // a client that resets is this task's business only
    } finally {
      yield* U.close(client);
    }
  }

  await U.run(
    function* () {
      const server = U.tcpv4();
      yield* U.bindAndListen(server, { host: "127.0.0.1", port: 0 });
      process.stdout.write(`PORT ${U.getsockname(server).port}\n`);
      const clients = B.orphans();
      for (;;) {
        for (let t = B.care(clients); t; t = B.care(clients)) yield* B.awaitTask(t);
        const [client] = yield* U.accept(server);
        B.spawn({ orphans: clients }, echo, client);
      }
    },
    { backend: () => U.libuv({ flush }) },
  );
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
