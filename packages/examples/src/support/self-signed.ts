/**
 * A self-signed TLS certificate made in memory when a program starts, so
 * that no private key is ever written to disk or committed: an EC P-256 key
 * from `node:crypto`, and a small DER writer for the X.509 certificate
 * (RFC 5280) that it signs (ECDSA with SHA-256).
 */
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { isIPv4 } from "node:net";

/** A key and its certificate, both PEM. */
export interface SelfSigned {
  /** The private key (PKCS #8). Keep it in memory. */
  readonly key: string;
  /** The certificate: give it to clients as their `ca`. */
  readonly cert: string;
}

// -- DER (the subset a certificate needs) ---------------------------------------

function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}

const sequence = (...items: Buffer[]): Buffer => der(0x30, ...items);
const set = (...items: Buffer[]): Buffer => der(0x31, ...items);
const octets = (content: Buffer): Buffer => der(0x04, content);
const utf8 = (text: string): Buffer => der(0x0c, Buffer.from(text, "utf8"));
const explicit = (n: number, content: Buffer): Buffer => der(0xa0 + n, content);
const TRUE = der(0x01, Buffer.from([0xff]));

/** An OBJECT IDENTIFIER from its dotted form. */
function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const bytes = [40 * a! + b!];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let v = arc >>> 7; v > 0; v >>>= 7) base128.unshift(0x80 | (v & 0x7f));
    bytes.push(...base128);
  }
  return der(0x06, Buffer.from(bytes));
}

/** A positive INTEGER from big-endian bytes. */
function integer(bytes: Buffer): Buffer {
  return der(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

/** UTCTime, `YYMMDDHHMMSSZ` (dates before 2050). */
function utcTime(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, "").slice(2, 14);
  return der(0x17, Buffer.from(`${text}Z`, "ascii"));
}

/** A Name with one common name. */
const commonName = (cn: string): Buffer => sequence(set(sequence(oid("2.5.4.3"), utf8(cn))));

/** subjectAltName: DNS names and IPv4 addresses. */
function altNames(hosts: readonly string[]): Buffer {
  const names = hosts.map((h) => (isIPv4(h) ? der(0x87, Buffer.from(h.split(".").map(Number))) : der(0x82, Buffer.from(h, "ascii"))));
  return sequence(oid("2.5.29.17"), octets(sequence(...names)));
}

const ECDSA_WITH_SHA256 = sequence(oid("1.2.840.10045.4.3.2"));
const DAY = 24 * 60 * 60 * 1000;

/**
 * A fresh key and a self-signed certificate for `hosts` (the first is the
 * common name), valid from yesterday for `days` days.
 *
 * @example
 * ```ts
 * const { key, cert } = selfSigned(["localhost", "127.0.0.1"]);
 * const server = tls.createServer({ key, cert });
 * const client = tls.connect({ port, host: "127.0.0.1", servername: "localhost", ca: cert });
 * ```
 * @throws RangeError when `hosts` is empty or `days` is not a positive integer.
 */
export function selfSigned(hosts: readonly string[] = ["localhost", "127.0.0.1"], days = 7): SelfSigned {
  if (hosts.length === 0) throw new RangeError('selfSigned(hosts): name at least one host, e.g. ["localhost"]');
  if (!Number.isInteger(days) || days < 1) throw new RangeError(`selfSigned(hosts, days): days must be a positive integer, got ${days}`);
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const name = commonName(hosts[0]!);
  const now = Date.now();
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))), // version 3
    integer(Buffer.concat([Buffer.from([1]), randomBytes(15)])), // serial number
    ECDSA_WITH_SHA256,
    name, // issuer: itself
    sequence(utcTime(new Date(now - DAY)), utcTime(new Date(now + days * DAY))),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    explicit(3, sequence(sequence(oid("2.5.29.19"), TRUE, octets(sequence(TRUE))), altNames(hosts))), // a CA (its own), and its names
  );
  const signature = sign("sha256", tbs, privateKey);
  const certificate = sequence(tbs, ECDSA_WITH_SHA256, der(0x03, Buffer.from([0]), signature));
  const base64 = certificate.toString("base64").replace(/.{64}/g, "$&\n");
  return {
    key: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    cert: `-----BEGIN CERTIFICATE-----\n${base64}${base64.endsWith("\n") ? "" : "\n"}-----END CERTIFICATE-----\n`,
  };
}
