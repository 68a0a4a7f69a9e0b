/**
 * A TLS echo server, with Node's `tls` under Bobbin's fibers (`fromStream`):
 *
 *     node dist/tls-echo.js [--port 3000] [--clients 20] [--message text] [--serve]
 *
 * Makes a key and a self-signed certificate in memory (nothing is written to
 * disk), listens, then runs `--clients` TLS clients at once, each trusting
 * only that certificate, and checks every echo; then stops the server and
 * exits. With `--serve` it serves until Ctrl-C instead: try
 * `openssl s_client -connect 127.0.0.1:3000 -quiet`. `main` runs it: Ctrl-C
 * cancels the server (every connection closes) and the exit code is 130.
 */
import { createHash, X509Certificate } from "node:crypto";
import * as B from "@bobbin/core";
import { main } from "@bobbin/unix";
import { serverArgs } from "./support/cli.js";
import { selfSigned } from "./support/self-signed.js";
import { exchange, listen, serve, stop } from "./tls/echo.js";

const { host, port, values } = serverArgs({
  clients: { type: "string", default: "20" },
  message: { type: "string", default: "hello over TLS" },
  serve: { type: "boolean", default: false },
});
const clients = Number(values.clients);
if (!Number.isInteger(clients) || clients < 1) throw new RangeError(`--clients must be an integer ≥ 1, got ${values.clients}`);
const message = String(values.message);

main(function* () {
  const credentials = selfSigned(["localhost", host]);
  const fingerprint = createHash("sha256").update(new X509Certificate(credentials.cert).raw).digest("hex").slice(0, 16);
  console.log(`certificate: self-signed for localhost and ${host}, made now (sha256 ${fingerprint}…)`);
  const server = yield* listen(credentials, { host, port });
  const serving = B.spawn(serve, server);
  try {
    console.log(`TLS echo server on ${server.address.host}:${server.address.port}`);
    if (values.serve === true) return yield* B.awaitExn(serving);
    const replies = yield* B.awaitAll(
      Array.from({ length: clients }, (_, i) => B.spawn(exchange, server.address, credentials.cert, "localhost", `${message} #${i}\n`)),
    );
    let echoed = 0;
    for (const [i, r] of replies.entries()) {
      if (!r.ok) throw r.error;
      if (r.value !== `${message} #${i}\n`) throw new Error(`client ${i} got ${JSON.stringify(r.value)} back`);
      echoed += r.value.length;
    }
    console.log(`${clients} TLS client(s): every echo checked, ${echoed} bytes`);
  } finally {
    yield* B.cancel(serving);
    yield* stop(server);
    console.log("server stopped");
  }
});
