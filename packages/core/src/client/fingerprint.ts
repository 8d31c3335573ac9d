/**
 * Certificate fingerprints in fleet.yaml's form (`tls.fingerprint: "sha256:AB:CD:…"`), apart from
 * the TLS code so that loading core does not load node:tls.
 */
import { X509Certificate } from 'node:crypto';

/** `sha256:AB:CD:…` (fleet.yaml) or `AB:CD:…` → `ABCD…` upper-case hex, for comparison. */
export function normaliseFingerprint(value: string): string {
  return value
    .replace(/^sha256:/i, '')
    .replace(/:/g, '')
    .toUpperCase();
}

/** The `sha256:AB:CD:…` fingerprint of a PEM certificate, in fleet.yaml's form. */
export function certificateFingerprint(pem: string | Buffer): string {
  return `sha256:${new X509Certificate(pem).fingerprint256}`;
}
