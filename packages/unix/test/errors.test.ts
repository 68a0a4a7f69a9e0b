import { describe, expect, it } from "vitest";
import { systemError } from "../src/backend/index.js";

describe("systemError", () => {
  it("gives a known code its errno", () => {
    const e = systemError("EPIPE", "write", "the peer closed");
    expect(e).toMatchObject({ code: "EPIPE", syscall: "write", errno: -32 });
    expect(e.message).toBe("write EPIPE: the peer closed");
  });

  it("gives no errno to a code it does not know, inherited object keys included", () => {
    for (const code of ["ENOTSUP", "constructor", "toString", "__proto__", "hasOwnProperty"]) {
      expect(systemError(code, "socket", "no").errno, code).toBeUndefined();
    }
  });
});
