// An echo round whose server answers nothing (a stalled backend once did, for a whole round) is a
// failure that names the server and prints what it says of itself, not "0 round trips/s" in a median.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { echoRound } from "../src/echo-common.js";

const common = pathToFileURL(join(import.meta.dirname, "../src/echo-common.js")).href;

describe("an echo round", () => {
  it("that counts no round trip fails, naming the server and with its dump", { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "bobbin-echo-round-"));
    try {
      // A server that says where it listens and answers the protocol, and a client that measured nothing.
      const server = join(dir, "server.mjs");
      writeFileSync(
        server,
        `import { serveCommands } from ${JSON.stringify(common)};\nprocess.stdout.write("PORT 1\\n");\nserveCommands();\n`,
      );
      const client = join(dir, "client");
      writeFileSync(client, `#!${process.execPath}\nprocess.stdout.write("START\\nEND 0 1.000000\\n");\n`);
      chmodSync(client, 0o755);
      await assert.rejects(echoRound([process.execPath, [server]], client, "stalled"), (error) => {
        assert.match(error.message, /^stalled: the server answered no round trip/);
        assert.match(error.message, /no dump: this server is not a Bobbin run/);
        return true;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
