import { createPrivateKey, X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { selfSigned } from "../../src/support/self-signed.js";

describe("selfSigned", () => {
  it("makes a key and an X.509 v3 certificate it signed, for its hosts, valid now", () => {
    const { key, cert } = selfSigned(["localhost", "127.0.0.1", "example.test"], 3);
    expect(key).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    const x = new X509Certificate(cert);
    expect(x.subject).toBe("CN=localhost");
    expect(x.issuer).toBe("CN=localhost");
    expect(x.verify(x.publicKey)).toBe(true);
    expect(x.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(x.subjectAltName).toBe("DNS:localhost, IP Address:127.0.0.1, DNS:example.test");
    expect(x.checkHost("example.test")).toBe("example.test");
    expect(x.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(x.ca).toBe(true);
    const from = Date.parse(x.validFrom);
    const to = Date.parse(x.validTo);
    expect(from).toBeLessThan(Date.now());
    expect(to).toBeGreaterThan(Date.now());
    expect(Math.round((to - from) / 86_400_000)).toBe(4); // from yesterday, for 3 days
  });

  it("a new key and serial number each time", () => {
    const [a, b] = [selfSigned(), selfSigned()];
    expect(a.key).not.toBe(b.key);
    expect(new X509Certificate(a.cert).serialNumber).not.toBe(new X509Certificate(b.cert).serialNumber);
  });

  it("rejects no host, or a validity that is not a positive number of days", () => {
    expect(() => selfSigned([])).toThrow(RangeError);
    expect(() => selfSigned(["localhost"], 0)).toThrow(RangeError);
  });
});
