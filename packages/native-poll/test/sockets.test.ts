// What the native and io_uring backends share (src/sockets.ts), checked on both.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as B from "@bobbin/core";
import { close, readExactly, run, write } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { nativeBackend, uringBackend } from "../src/index.js";
import { noUring, pair } from "./helpers.js";

const backends = [
  { name: "native", backend: nativeBackend, exported: "nativeBackend", skip: "" },
  { name: "uring", backend: uringBackend, exported: "uringBackend", skip: noUring },
];

describe.each(backends)("$name backend", ({ name, backend, exported, skip }) => {
  it.skipIf(skip !== "")(`concurrent writes to one socket never interleave, even past the socket buffers${skip}`, async () => {
    const size = 4 << 20; // far more than the kernel buffers: both writes park
    const [a, b, c] = [Buffer.alloc(size, 0x61), Buffer.alloc(size, 0x62), Buffer.from("c")];
    const got = await run(
      function* () {
        const [server, conn, client] = yield* pair();
        const writers = [a, b, c].map((buf) =>
          B.spawn(function* () {
            yield* write(client, buf);
          }),
        );
        const received = Buffer.alloc(2 * size + 1);
        yield* readExactly(conn, received);
        yield* B.awaitAll(writers);
        for (const s of [client, conn, server]) yield* close(s);
        return received;
      },
      { backend },
    );
    expect(got.subarray(0, size).every((x) => x === 0x61)).toBe(true);
    expect(got.subarray(size, 2 * size).every((x) => x === 0x62)).toBe(true);
    expect(got[2 * size]).toBe(0x63);
  });

  it.skipIf(skip !== "")(`a run whose tasks wait on nothing I/O can wake ends in Deadlock, even with sockets open${skip}`, () => {
    const child = fileURLToPath(new URL("./fixtures/deadlock-child.mjs", import.meta.url));
    const out = execFileSync(process.execPath, [child, exported], { encoding: "utf8", timeout: 20_000 });
    expect(out.trim(), name).toBe("DEADLOCK");
  });
});
