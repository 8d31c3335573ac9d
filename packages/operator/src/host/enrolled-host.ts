/**
 * Step 2 of `fleet host add` (add.ts, contract §12.1): a host that already answers over TLS as
 * this host, with the canonical runtime and the domains asked for, is enrolled — nothing is sent;
 * only its node policy is brought up to the one planned when it differs.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import * as core from '@fleet/core';
import type { LoadedArtifact } from '../runtime/artifact.js';
import { enrollmentPolicy, type EnrollmentInput } from './enrollment.js';
import { POLICY_FILE, type HostFacts } from './probe.js';
import { must } from './remote.js';
import { shellQuote, type SshSession } from './ssh-session.js';

/**
 * The certificate fingerprint when the host already runs this fleet's canonical runtime as
 * `name` and the credentials file's token opens it over TLS; `null` otherwise.
 */
export async function answersAsEnrolled(
  name: string,
  url: string,
  facts: HostFacts,
  artifact: LoadedArtifact,
  options: { readonly domains?: readonly string[] },
): Promise<string | null> {
  if (facts.certificate === null || !facts.controllerActive) return null;
  const credentialsPath = core.defaultCredentialsPath(process.env);
  if (!existsSync(credentialsPath)) return null;
  const credentials = await core.loadCredentials(credentialsPath);
  const token = credentials.hosts[name]?.token;
  if (token === undefined) return null;
  const fingerprint = core.certificateFingerprint(facts.certificate);
  const client = core.createControllerClient({
    host: name,
    url,
    token,
    tlsFingerprint: fingerprint,
    timeoutMs: 10_000,
  });
  try {
    const identity = await client.identity();
    return identity.nodeId === name &&
      identity.build.sha256 === artifact.identity.sha256 &&
      identity.health.status === 'ok' &&
      domainsServed(identity.catalog.domains, options.domains ?? [])
      ? fingerprint
      : null;
  } catch {
    return null;
  } finally {
    client.close();
  }
}

function domainsServed(
  catalog: readonly { name?: string; domain?: string }[],
  wanted: readonly string[],
): boolean {
  const served = new Set(catalog.map((entry) => entry.domain ?? entry.name));
  return wanted.every((domain) => served.has(domain));
}

/**
 * On an enrolled host whose policy is not the one planned (a path added to files.yaml, a domain
 * added): the planned policy written over SSH — the earlier one kept as a `.bak` beside it,
 * written to a temp file (0600) and renamed. The controller reads it at its next request.
 */
export async function updatePolicy(
  session: SshSession,
  facts: HostFacts,
  input: EnrollmentInput,
  options: { readonly progress: (line: string) => void },
): Promise<boolean> {
  const text = core.formatNodePolicy(enrollmentPolicy(input));
  if (facts.policySha256 === createHash('sha256').update(text).digest('hex')) return false;
  const file = `${facts.home}/${POLICY_FILE}`;
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  options.progress(
    `${input.name}: updating its node policy (the earlier one kept as ${file}.${stamp}.bak)…`,
  );
  await must(
    session,
    `umask 077 && mkdir -p ${shellQuote(dirname(file))} && { [ ! -f ${shellQuote(file)} ] || cp -p ${shellQuote(file)} ${shellQuote(`${file}.${stamp}.bak`)}; } && cat > ${shellQuote(`${file}.fleet-new`)} && mv -f ${shellQuote(`${file}.fleet-new`)} ${shellQuote(file)}`,
    text,
  );
  return true;
}
