/**
 * The release signature a runtime change needs (ADR 0019, docs/node-policy.md `runtime`): what a
 * stage decides from the node policy's `runtime` section, the signature the request carried and
 * the artifact's exact bytes. Pure; the stage (lifecycle/stage.ts) calls it before anything is
 * journaled or written.
 *
 * - A signature sent is always checked: it must be a `fleet-release` SSH signature over these
 *   bytes by one of `runtime.trustedKeys` (`SIGNATURE_INVALID`, naming the key it was made with).
 * - No signature: refused (`ARTIFACT_UNSIGNED`) unless `runtime.allowUnsigned: true` — a hand-made
 *   test node — which stages as before signatures existed.
 */
import {
  FleetError,
  NODE_POLICY_PATH,
  verifyReleaseSignature,
  type NodeRuntimePolicy,
} from '@fleet/core/node';

/** How a staged artifact was admitted: by whose signature, or unsigned by the policy's leave. */
export type ReleaseAdmission =
  | { readonly signed: true; readonly key: string; readonly fingerprint: string }
  | { readonly signed: false };

/** The words a stage's audit record adds (docs/audit-log.md): who signed, or that none did. */
export function admissionDetail(admission: ReleaseAdmission): string {
  return admission.signed
    ? `signed by ${admission.fingerprint}`
    : 'unsigned, allowed by runtime.allowUnsigned';
}

/**
 * `ARTIFACT_UNSIGNED` when no signature came and the policy does not allow that; nothing else
 * needs the bytes, so this runs before a held generation is read.
 */
export function requireSignatureOrLeave(
  runtime: NodeRuntimePolicy | undefined,
  signature: string | undefined,
): void {
  if (signature !== undefined || runtime?.allowUnsigned === true) return;
  const keys = runtime?.trustedKeys.length ?? 0;
  throw new FleetError(
    'ARTIFACT_UNSIGNED',
    `the artifact comes without a release signature, and this node's policy stages only signed runtimes (${keys === 0 ? 'it trusts no key yet' : `by one of its ${keys} trusted key(s)`}); nothing was staged`,
    {
      suggestions: [
        'sign the release (ssh-keygen -Y sign -n fleet-release) and pin its signature in fleet.yaml',
        `on the node: runtime.trustedKeys in ${NODE_POLICY_PATH} (docs/node-policy.md)`,
      ],
    },
  );
}

/** Decides whether `artifact` may be staged; throws `ARTIFACT_UNSIGNED` or `SIGNATURE_INVALID`. */
export function admitRelease(
  runtime: NodeRuntimePolicy | undefined,
  signature: string | undefined,
  artifact: Buffer,
): ReleaseAdmission {
  requireSignatureOrLeave(runtime, signature);
  if (signature === undefined) return { signed: false };
  const verdict = verifyReleaseSignature(artifact, signature, runtime?.trustedKeys ?? []);
  if (!verdict.ok) {
    throw new FleetError('SIGNATURE_INVALID', `${verdict.reason}; nothing was staged`, {
      suggestions: [
        `on the node: runtime.trustedKeys in ${NODE_POLICY_PATH} (docs/node-policy.md)`,
      ],
    });
  }
  return { signed: true, key: verdict.key, fingerprint: verdict.fingerprint };
}
