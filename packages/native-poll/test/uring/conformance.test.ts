// The backend conformance suite of @bobbin/unix, through its published export, on the io_uring backend.
import { conformance } from "@bobbin/unix/conformance";
import { describe, it } from "vitest";
import { uringBackend } from "../../src/index.js";
import { noUring, uring } from "../helpers.js";

if (uring.available) {
  conformance("uring", uringBackend, {
    // the child process runs the built package (pnpm test builds first)
    childProcess: { module: new URL("../../dist/index.js", import.meta.url).href, export: "uringBackend" },
  });
} else {
  describe(`backend conformance: uring${noUring}`, () => {
    it.skip(`the whole suite${noUring}`, () => {});
  });
}
