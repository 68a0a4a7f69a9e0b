/**
 * Chapter 6, the echo server with orphans:
 *
 *     node dist/ch06-echo.js [--port 3000]
 *
 * Runs until killed (chapter 8 stops cleanly on SIGINT). Try
 * `echo Hello | nc -q0 127.0.0.1 3000`. Runs on the native backend when
 * its addon is built, on libuv otherwise (`BOBBIN_BACKEND=libuv` forces it).
 */
import { run } from "@bobbin/unix";
import { server } from "./ch06/echo.js";
import { formatAddress } from "./support/address.js";
import { chooseBackend } from "./support/backend.js";
import { serverArgs } from "./support/cli.js";

const { host, port } = serverArgs();
const backend = await chooseBackend();
console.log(`backend: ${backend.name} (${backend.reason})`);
await run(
  function* () {
    yield* server({ host, port }, (address) => console.log(`echo server on ${formatAddress(address)}`));
  },
  { backend: backend.factory },
);
