// serve and fetch on @bobbin/native-poll's io_uring backend, where the kernel has io_uring.
import { UringUnavailable, uringAvailable, uringBackend } from "@bobbin/native-poll";
import { describe, expect, it } from "vitest";
import { serveSuite } from "./support/suite.js";

if (uringAvailable()) {
  serveSuite({ name: "io_uring", backend: uringBackend, systemSockets: true });
} else {
  describe("serve and fetch on io_uring, unavailable here", () => {
    it("asking for the backend is UringUnavailable", () => {
      expect(() => uringBackend()).toThrow(UringUnavailable);
    });
  });
}
