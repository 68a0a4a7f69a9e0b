// A program on each backend this machine has: 100 kB echoed over TCP on
// loopback and compared, with libuv (always there), the native epoll/kqueue
// backend and io_uring when they load. One line per backend; exit 1 if any
// backend that is there fails, or if one is missing without saying why.
import { randomBytes } from "node:crypto";
import * as B from "@bobbin/core";
import { NativeUnavailable, nativeAvailable, nativeBackend, uringAvailable, uringBackend, uringSupport } from "@bobbin/native-poll";
import { accept, bindAndListen, close, connect, getsockname, read, readExactly, run, shutdown, tcpv4, write } from "@bobbin/unix";

function* echoOne(server) {
  const [client] = yield* accept(server);
  const buf = Buffer.alloc(4096);
  try {
    for (let n; (n = yield* read(client, buf)) > 0; ) yield* write(client, buf, 0, n);
  } finally {
    yield* close(client);
  }
}

function* roundTrip() {
  const server = tcpv4();
  yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
  const serving = B.spawn(echoOne, server);
  const client = tcpv4();
  yield* connect(client, getsockname(server));
  const message = randomBytes(100_000);
  const writer = B.spawn(function* () {
    yield* write(client, message);
    shutdown(client, "send");
  });
  const back = Buffer.alloc(message.length);
  yield* readExactly(client, back);
  yield* B.awaitExn(writer);
  yield* B.awaitExn(serving);
  yield* close(client);
  yield* close(server);
  return back.equals(message);
}

let failures = 0;
async function on(name, backend) {
  try {
    const same = await run(roundTrip, backend === undefined ? {} : { backend });
    console.log(`${name}: ${same ? "100000 bytes echoed, every byte the same" : "FAILED: the echo differs"}`);
    if (!same) failures++;
  } catch (error) {
    console.log(`${name}: FAILED: ${error.stack}`);
    failures++;
  }
}

await on("libuv", undefined);
if (nativeAvailable()) await on("native", nativeBackend);
else {
  try {
    nativeBackend();
  } catch (error) {
    console.log(`native: unavailable: ${error instanceof NativeUnavailable ? error.message : `NOT NativeUnavailable: ${error}`}`);
    if (!(error instanceof NativeUnavailable)) failures++;
  }
}
if (uringAvailable()) await on("io_uring", uringBackend);
else console.log(`io_uring: unavailable: ${uringSupport().reason}`);
process.exit(failures === 0 ? 0 : 1);
