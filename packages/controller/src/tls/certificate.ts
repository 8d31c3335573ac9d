/**
 * The controller's own TLS certificate (contract §5 "a non-loopback bind needs TLS", §12; issue 35
 * item 2): a key pair and a self-signed certificate made ON THE NODE — the private key never
 * leaves it — under `<home>/.config/fleet/tls/` (directory 0700, files 0600, written durably).
 * Operators trust it by its fingerprint, which fleet.yaml pins (`tls.fingerprint`,
 * `packages/core/src/client/tls.ts`): the pin replaces the chain and the name check, so the
 * subject alternative names are a courtesy to other clients (curl, a browser) and the expiry is
 * far away — a renewed certificate is a new fingerprint, which every operator would have to pin
 * again. An existing pair that matches itself and covers the listen is therefore kept as it is:
 * stage after stage, the fingerprint stays.
 *
 * ECDSA P-256 through WebCrypto, the certificate built by `@peculiar/x509` (which needs the
 * `reflect-metadata` polyfill, loaded here and only when a certificate is made).
 */
import { createPrivateKey, webcrypto, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';
import { certificateFingerprint, FleetError, type ControllerListen } from '@fleet/core/node';
import { ensurePrivateDir, writeFileAtomic } from '../fs/durable.js';

/** Where the certificate and key live, relative to the home (contract §5). */
export const TLS_DIR = '.config/fleet/tls';
export const CERT_FILE = 'controller-cert.pem';
export const KEY_FILE = 'controller-key.pem';

export interface ControllerCertificate {
  readonly certFile: string;
  readonly keyFile: string;
  /** In fleet.yaml's form, `sha256:AB:CD:…` (what the operator's client pins). */
  readonly fingerprint: string;
  /** False when an existing pair was kept. */
  readonly created: boolean;
}

/** About 20 years: see the header — a renewal changes the pinned fingerprint. */
const VALIDITY_MS = 20 * 365 * 24 * 60 * 60 * 1000;

/** An IP address as one text (`::1` and `0:0:0:0:0:0:0:1` are the same). */
function normaliseIp(address: string): string {
  return isIP(address) === 6 ? new URL(`http://[${address}]`).hostname.slice(1, -1) : address;
}

/**
 * The names a certificate for `listen` carries (pure): the bound address (not a wildcard), the
 * DNS names the Host check accepts, and 127.0.0.1, where the node's own processes (the runner's
 * acceptance) reach a controller bound to every interface.
 */
export function certificateNames(listen: ControllerListen): {
  readonly ips: readonly string[];
  readonly dns: readonly string[];
} {
  const ips = new Set<string>(['127.0.0.1']);
  if (listen.bind !== '0.0.0.0' && listen.bind !== '::') ips.add(normaliseIp(listen.bind));
  const dns = new Set(
    listen.allowedHosts
      .map((host) => host.replace(/:\d+$/, '').toLowerCase())
      .filter((name) => isIP(name) === 0),
  );
  return { ips: [...ips].sort(), dns: [...dns].sort() };
}

/** The names a certificate carries, from node's `subjectAltName` text (pure). */
export function subjectAltNames(text: string | undefined): {
  readonly ips: ReadonlySet<string>;
  readonly dns: ReadonlySet<string>;
} {
  const ips = new Set<string>();
  const dns = new Set<string>();
  for (const entry of (text ?? '').split(', ')) {
    if (entry.startsWith('IP Address:')) ips.add(normaliseIp(entry.slice('IP Address:'.length)));
    else if (entry.startsWith('DNS:')) dns.add(entry.slice('DNS:'.length).toLowerCase());
  }
  return { ips, dns };
}

/** Why an existing pair cannot be kept, or `null` when it can. */
async function existingProblem(
  certFile: string,
  keyFile: string,
  listen: ControllerListen,
): Promise<string | null> {
  let cert: X509Certificate;
  try {
    const [certPem, keyPem] = await Promise.all([readFile(certFile), readFile(keyFile)]);
    cert = new X509Certificate(certPem);
    if (!cert.checkPrivateKey(createPrivateKey(keyPem))) return 'the key is not the certificate’s';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'none yet' : `unreadable (${code ?? (error as Error).message})`;
  }
  const wanted = certificateNames(listen);
  const held = subjectAltNames(cert.subjectAltName);
  const missing = [
    ...wanted.ips.filter((ip) => !held.ips.has(ip)),
    ...wanted.dns.filter((name) => !held.dns.has(name)),
  ];
  return missing.length > 0 ? `it does not name ${missing.join(', ')}` : null;
}

/** A new key pair and self-signed certificate naming `listen`'s addresses (PEM). */
async function makeCertificate(
  listen: ControllerListen,
): Promise<{ readonly cert: string; readonly key: string }> {
  // Lazy: only when a certificate is made (packages/controller/README.md, Lazy imports kept).
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  const crypto = webcrypto;
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const names = certificateNames(listen);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
        .toString('hex')
        .replace(/^[89a-f]/, '7'), // a positive serial (RFC 5280 §4.1.2.2)
      name: `CN=${names.dns[0] ?? names.ips.find((ip) => ip !== '127.0.0.1') ?? '127.0.0.1'}, O=fleet controller`,
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + VALIDITY_MS),
      keys,
      signingAlgorithm: algorithm,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([
          ...names.dns.map((value) => ({ type: 'dns' as const, value })),
          ...names.ips.map((value) => ({ type: 'ip' as const, value })),
        ]),
      ],
    },
    crypto,
  );
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey('pkcs8', keys.privateKey));
  const key = `-----BEGIN PRIVATE KEY-----\n${pkcs8
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n?$/, '\n')}-----END PRIVATE KEY-----\n`;
  return { cert: cert.toString('pem'), key };
}

/**
 * The controller's certificate for `listen`, made on this node when there is none or the one
 * there cannot serve it (its key is not its own, or it does not name the listen's addresses);
 * otherwise kept (idempotent: the fingerprint operators pinned stays). The key is written before
 * the certificate, each atomically and durably (mode 0600), in a 0700 directory.
 */
export async function ensureControllerCertificate(
  home: string,
  listen: ControllerListen,
): Promise<ControllerCertificate> {
  const { certFile, keyFile } = controllerCertificateFiles(home);
  await ensurePrivateDir(home, dirname(certFile));
  const problem = await existingProblem(certFile, keyFile, listen);
  if (problem === null) {
    return {
      certFile,
      keyFile,
      fingerprint: certificateFingerprint(await readFile(certFile)),
      created: false,
    };
  }
  let made: { readonly cert: string; readonly key: string };
  try {
    made = await makeCertificate(listen);
  } catch (error) {
    throw new FleetError(
      'ACTION_FAILED',
      `the controller's TLS certificate could not be made (${(error as Error).message}); nothing was staged`,
      { cause: error },
    );
  }
  await writeFileAtomic(keyFile, made.key);
  await writeFileAtomic(certFile, made.cert);
  return { certFile, keyFile, fingerprint: certificateFingerprint(made.cert), created: true };
}

/**
 * The `controller serve` flags for `listen` (pure): `--bind`, `--port`, the certificate's files
 * when it serves TLS, `--allowed-host` (comma-separated) for the names the Host check accepts.
 */
export function controllerListenFlags(
  listen: ControllerListen,
  tlsFiles: { readonly certFile: string; readonly keyFile: string } | null,
): string[] {
  if (listen.tls && tlsFiles === null) {
    throw new FleetError(
      'USAGE',
      `${listen.bind}:${listen.port} serves https: it needs its certificate's files`,
    );
  }
  const flags = ['--bind', listen.bind, '--port', String(listen.port)];
  if (listen.tls && tlsFiles !== null)
    flags.push('--tls-cert', tlsFiles.certFile, '--tls-key', tlsFiles.keyFile);
  if (listen.allowedHosts.length > 0) flags.push('--allowed-host', listen.allowedHosts.join(','));
  return flags;
}

/** The certificate's files for `home` (where {@link ensureControllerCertificate} writes them). */
export function controllerCertificateFiles(home: string): {
  readonly certFile: string;
  readonly keyFile: string;
} {
  const dir = join(home, ...TLS_DIR.split('/'));
  return { certFile: join(dir, CERT_FILE), keyFile: join(dir, KEY_FILE) };
}
