// The backend conformance suite of @bobbin/unix, run against the io_uring backend.
import { describe, it } from "vitest";
import { conformance } from "../../../unix/test/conformance/suite.js";
import { uringBackend, uringSupport } from "../../src/index.js";

const support = uringSupport();
if (support.available) {
  conformance("uring", uringBackend, {
    childBackend: { module: new URL("../../src/index.ts", import.meta.url).href, export: "uringBackend" },
  });
} else {
  describe(`backend conformance: uring — skipped: ${support.reason}`, () => {
    it.skip("needs io_uring", () => {});
  });
}
