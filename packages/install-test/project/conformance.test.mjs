// @bobbin/unix's conformance suite run from a project that installed the
// packages, on the libuv backend and the native one. vitest is this
// project's own devDependency: @bobbin/unix/conformance imports it as an
// optional peer dependency, which resolves to this very copy, the one running
// the tests.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { nativeAvailable, nativeBackend } from "@bobbin/native-poll";
import { libuv } from "@bobbin/unix";
import { conformance } from "@bobbin/unix/conformance";

conformance("libuv", libuv, { childProcess: { module: "@bobbin/unix", export: "libuv" } });

if (nativeAvailable()) {
  // The child process must find the factory where this project does.
  const module = pathToFileURL(createRequire(import.meta.url).resolve("@bobbin/native-poll")).href;
  conformance("native", nativeBackend, { childProcess: { module, export: "nativeBackend" } });
}
