// @bobbin/unix's conformance suite on this backend. It imports vitest
// itself (an optional peer dependency of @bobbin/unix): it must be the very
// copy that runs this file, which is so when vitest is a devDependency of
// this project and @bobbin/unix is installed beside it (check with
// `npm ls vitest`: one version). `npm test` builds first: the fd-exhaustion
// test runs the backend in a child process, from dist/.
import { conformance } from "@bobbin/unix/conformance";
import { myBackend } from "../dist/index.js";

conformance("mine", myBackend, {
  childProcess: { module: new URL("../dist/index.js", import.meta.url).href, export: "myBackend" },
});
