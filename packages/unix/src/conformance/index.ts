/**
 * `@bobbin/unix/conformance`: the backend conformance suite. Every backend
 * of `@bobbin/unix` must pass it; a backend's own vitest file runs it:
 *
 * ```ts
 * import { conformance } from "@bobbin/unix/conformance";
 * import { myBackend } from "../src/index.js";
 *
 * conformance("mine", myBackend, {
 *   childProcess: { module: new URL("../dist/index.js", import.meta.url).href, export: "myBackend" },
 * });
 * ```
 *
 * Everything stays on loopback (127.0.0.1, ::1, Unix sockets in a temporary
 * directory); load tests are bounded in count and time; each test counts the
 * process's active handles before and after its run.
 * @packageDocumentation
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Backend } from "@bobbin/unix";
import { afterAll, beforeAll, describe } from "vitest";
import { asyncContextTests } from "./async-context.js";
import { cancellationTests } from "./cancellation.js";
import { chunkTests } from "./chunks.js";
import { closingTests } from "./closing.js";
import { type ConformanceOptions, makeSuite } from "./context.js";
import { descriptorTests } from "./descriptors.js";
import { disposalTests } from "./disposal.js";
import { echoTests } from "./echo.js";
import { endOfRunTests } from "./end-of-run.js";
import { failureTests } from "./failures.js";
import { fdExhaustionTests } from "./fd-exhaustion.js";
import { readOrderTests } from "./read-order.js";
import { sharingTests } from "./sharing.js";
import { soakTests } from "./soak.js";
import { socketFileTests } from "./socket-files.js";
import { streamTests } from "./streams.js";

export type { ConformanceOptions } from "./context.js";
export { activeHandles, connectedPair, leaked } from "./support.js";

/**
 * Defines the conformance tests of a backend (vitest `describe`/`it`), in a
 * group named after it. `backend` makes a fresh backend for each run, as
 * `run(main, { backend })` expects; `options` say what it can do (see
 * {@link ConformanceOptions}).
 *
 * @example
 * ```ts
 * // test/conformance.test.ts of a backend's package
 * import { conformance } from "@bobbin/unix/conformance";
 * import { myBackend } from "../src/index.js";
 * conformance("mine", myBackend);
 * ```
 * @throws TypeError when `backend` is not a function or `options` is not an object.
 */
export function conformance(name: string, backend: (domain: number) => Backend, options: ConformanceOptions = {}): void {
  if (typeof backend !== "function") throw new TypeError("conformance(name, backend): backend must be a factory (domain) => Backend");
  if (options === null || typeof options !== "object")
    throw new TypeError("conformance(name, backend, options): options must be an object");
  let dir = "";
  const suite = makeSuite(backend, options, () => dir);
  describe(`backend conformance: ${name}`, () => {
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "bobbin-unix-"));
    });
    afterAll(() => {
      rmSync(dir, { recursive: true, force: true });
    });
    echoTests(suite);
    readOrderTests(suite);
    chunkTests(suite);
    failureTests(suite);
    closingTests(suite);
    disposalTests(suite);
    cancellationTests(suite);
    endOfRunTests(suite);
    fdExhaustionTests(suite);
    streamTests(suite);
    sharingTests(suite);
    socketFileTests(suite);
    descriptorTests(suite);
    soakTests(suite);
    asyncContextTests(suite);
  });
}
