/**
 * A Unix listener's file: closing the listener unlinks the socket it bound,
 * found by the absolute path it had at bind time, and nothing else — not a
 * file of the same relative name in the directory the process moved to, not
 * a file someone put in the socket's place.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isMainThread } from "node:worker_threads";
import * as B from "@bobbin/core";
import { accept, bindAndListen, close, connect, unixSocket } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import type { Suite } from "./context.js";

/** @internal */
export function socketFileTests(suite: Suite): void {
  // The files are the system's, and only the main thread may change the process's directory.
  describe.skipIf(!suite.systemSockets || !isMainThread)("Unix socket files", () => {
    it("closing a listener bound by a relative path unlinks its socket, not the same name in the directory the process moved to", async () => {
      const home = process.cwd();
      const bound = join(suite.dir(), "bound-here");
      const moved = join(suite.dir(), "moved-here");
      mkdirSync(bound);
      mkdirSync(moved);
      process.chdir(bound);
      try {
        await suite.leakFree(function* () {
          const server = unixSocket();
          yield* bindAndListen(server, { path: "relative.sock" });
          expect(lstatSync(join(bound, "relative.sock")).isSocket(), "the socket is at the path it was bound to").toBe(true);
          // It takes connections at that path.
          const peer = B.spawn(function* () {
            return (yield* accept(server))[0];
          });
          const client = unixSocket();
          yield* connect(client, { path: "relative.sock" });
          yield* close(yield* B.awaitExn(peer));
          yield* close(client);
          process.chdir(moved);
          writeFileSync(join(moved, "relative.sock"), "an unrelated file");
          yield* close(server);
        });
      } finally {
        process.chdir(home);
      }
      expect(readFileSync(join(moved, "relative.sock"), "utf8"), "the unrelated file of the same relative name survives").toBe(
        "an unrelated file",
      );
      expect(existsSync(join(bound, "relative.sock")), "the listener's own socket file is gone").toBe(false);
    });

    it("closing a listener whose socket file was replaced leaves the new file", async () => {
      const path = join(suite.dir(), "replaced.sock");
      await suite.leakFree(function* () {
        const server = unixSocket();
        yield* bindAndListen(server, { path });
        unlinkSync(path);
        writeFileSync(path, "not the listener's");
        yield* close(server);
      });
      expect(readFileSync(path, "utf8"), "a file that is not the socket bound is never unlinked").toBe("not the listener's");
    });
  });
}
