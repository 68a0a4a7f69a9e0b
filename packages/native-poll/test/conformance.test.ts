// The backend conformance suite of @bobbin/unix, run against the native backend.
import { conformance } from "../../unix/test/conformance/suite.js";
import { nativeBackend } from "../src/index.js";

conformance("native", nativeBackend, {
  childBackend: { module: new URL("../src/index.ts", import.meta.url).href, export: "nativeBackend" },
});
