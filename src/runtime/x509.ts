// A self-signed CA and a serving certificate it signs (ECDSA P-256, SHA-256), DER-encoded by hand:
// node:crypto verifies and parses X.509 but does not issue certificates. Used for endpoints whose
// certificate the operator makes itself when none is given (the history endpoint).
//
// Why by hand and not a certificate library (@peculiar/x509, node-forge): the dangerous parts — key
// generation, the signature, randomness — are node:crypto's; what is written here is only the
// fixed DER layout of one CA and one leaf (~100 lines), which the tests check with OpenSSL's
// `verify -x509_strict`, Node's X509Certificate and a real TLS handshake. A library would add its
// ASN.1 schema stack (and, for @peculiar/x509, a DI container and reflect-metadata) to the bundled
// operator that every start loads, for a certificate made once per installation.

import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import { isIP } from "node:net";

/** PEM certificate and PKCS#8 private key. */
export interface PemPair {
  cert: string;
  key: string;
}

/** A CA and a certificate it signed, as stored in a kubernetes.io/tls Secret. */
export interface IssuedTls extends PemPair {
  ca: string;
}

// ---- DER ------------------------------------------------------------------------------------

function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, content]);
}

const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), b]));
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, "utf8"));
const explicit = (n: number, inner: Buffer) => tlv(0xa0 | n, inner);

function int(b: Buffer): Buffer {
  // Positive: a leading 0 when the high bit is set.
  return tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const out = [40 * a! + b!];
  for (const v of rest) {
    const chunk = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) chunk.unshift((x & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, "").slice(0, 14); // YYYYMMDDHHMMSS
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`))
    : tlv(0x18, Buffer.from(`${iso}Z`));
}

const name = (cn: string) => seq(set(seq(oid("2.5.4.3"), utf8(cn))));

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split(".").map(Number));
  // IPv6: expand "::" and write 8 groups.
  const [head, tail] = ip.split("::") as [string, string?];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  return Buffer.concat(groups.map((g) => Buffer.from(g.padStart(4, "0"), "hex")));
}

const ECDSA_SHA256 = seq(oid("1.2.840.10045.4.3.2"));

function pem(label: string, der: Buffer): string {
  const b64 = der.toString("base64").replace(/.{64}/g, "$&\n");
  return `-----BEGIN ${label}-----\n${b64}${b64.endsWith("\n") ? "" : "\n"}-----END ${label}-----\n`;
}

/** SHA-1 of the public key's bits (RFC 5280 4.2.1.2, method 1). */
function keyId(spki: Buffer): Buffer {
  // The SubjectPublicKeyInfo of a P-256 key ends with the BIT STRING of the 65-byte point.
  return createHash("sha1")
    .update(spki.subarray(spki.length - 65))
    .digest();
}

interface Issue {
  subject: string;
  publicKey: KeyObject;
  issuer: string;
  issuerKey: KeyObject;
  issuerKeyId: Buffer;
  notBefore: Date;
  notAfter: Date;
  extensions: Buffer[];
}

function issue(o: Issue): string {
  const spki = o.publicKey.export({ type: "spki", format: "der" });
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive, 16 bytes, never zero
  const tbs = seq(
    explicit(0, int(Buffer.from([2]))), // v3
    int(serial),
    ECDSA_SHA256,
    name(o.issuer),
    seq(time(o.notBefore), time(o.notAfter)),
    name(o.subject),
    spki,
    explicit(
      3,
      seq(
        ...o.extensions,
        extension("2.5.29.14", false, octets(keyId(spki))),
        extension("2.5.29.35", false, seq(tlv(0x80, o.issuerKeyId))),
      ),
    ),
  );
  const signature = sign("sha256", tbs, o.issuerKey); // DER ECDSA-Sig-Value
  return pem("CERTIFICATE", seq(tbs, ECDSA_SHA256, bits(signature)));
}

/**
 * A new CA (`caName`) and a server certificate it signs for `dnsNames` and `ipAddresses`, both
 * valid `days` from an hour ago (clock skew). The CA's key is not kept: the pair is renewed by
 * making a new one.
 */
export function issueServingTls(o: {
  caName: string;
  commonName: string;
  dnsNames: readonly string[];
  ipAddresses: readonly string[];
  days: number;
  now?: Date;
}): IssuedTls {
  const now = o.now ?? new Date();
  const notBefore = new Date(now.getTime() - 3600_000);
  const notAfter = new Date(now.getTime() + o.days * 86400_000);
  const ca = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const leaf = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const caKeyId = keyId(ca.publicKey.export({ type: "spki", format: "der" }));
  const caCert = issue({
    subject: o.caName,
    publicKey: ca.publicKey,
    issuer: o.caName,
    issuerKey: ca.privateKey,
    issuerKeyId: caKeyId,
    notBefore,
    notAfter,
    extensions: [
      extension("2.5.29.19", true, seq(bool(true))), // CA:true
      extension("2.5.29.15", true, bits(Buffer.from([0x86]), 1)), // digitalSignature, keyCertSign, cRLSign
    ],
  });
  const san = seq(
    ...o.dnsNames.map((d) => tlv(0x82, Buffer.from(d, "ascii"))),
    ...o.ipAddresses.map((ip) => tlv(0x87, ipBytes(ip))),
  );
  const cert = issue({
    subject: o.commonName,
    publicKey: leaf.publicKey,
    issuer: o.caName,
    issuerKey: ca.privateKey,
    issuerKeyId: caKeyId,
    notBefore,
    notAfter,
    extensions: [
      extension("2.5.29.19", true, seq()), // CA:false
      extension("2.5.29.15", true, bits(Buffer.from([0x80]), 7)), // digitalSignature
      extension("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.1"))), // serverAuth
      extension("2.5.29.17", false, san),
    ],
  });
  return {
    ca: caCert,
    cert,
    key: leaf.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}
