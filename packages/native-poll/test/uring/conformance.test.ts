// The backend conformance suite of @bobbin/unix, through its published export, on the io_uring backend.
import { conformance } from "@bobbin/unix/conformance";
import { describe, expect, it } from "vitest";
import { UringUnavailable, uringBackend } from "../../src/index.js";
import { noUring, uring } from "../helpers.js";

if (uring.available) {
  conformance("uring", uringBackend, {
    // the child process runs the built package (pnpm test builds first)
    childProcess: { module: new URL("../../dist/index.js", import.meta.url).href, export: "uringBackend" },
  });
} else {
  // Where the kernel or the sandbox refuses io_uring, what a user meets is the typed error.
  describe("backend conformance: uring, unavailable here", () => {
    it(`asking for the backend is UringUnavailable with the reason${noUring}`, () => {
      expect(() => uringBackend()).toThrow(UringUnavailable);
    });
  });
}
