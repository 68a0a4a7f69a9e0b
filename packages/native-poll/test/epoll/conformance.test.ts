// The backend conformance suite of @bobbin/unix, through its published export, on the native backend.
import { conformance } from "@bobbin/unix/conformance";
import { nativeBackend } from "../../src/index.js";

conformance("native", nativeBackend, {
  // the child process runs the built package (pnpm test builds first)
  childProcess: { module: new URL("../../dist/index.js", import.meta.url).href, export: "nativeBackend" },
});
