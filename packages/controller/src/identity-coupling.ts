/**
 * The fail-closed coupling of contract §10.2, at the controller's start: the node's identity file
 * (owned by the transport-identity domain, default `~/.config/fleet/transport.yaml`) names the
 * node id this node must run as in `expected_node`. A controller whose `--node-id` disagrees with
 * it refuses to serve at all (`NODE_ID_MISMATCH`): it never answers as a node it is not. The check
 * runs after startup recovery, which settles an interrupted node-id change first (restoring the
 * file when the change was rolled back). No identity file (the domain not installed yet), or no
 * transport-identity domain loaded, means nothing to check.
 */
import { FleetError, isFleetError, parseYaml, type Registry } from '@fleet/core/node';
import { decodeText, readLive, targetOf } from './fs/safe-path.js';

/** The domain that owns the node identity file. */
export const IDENTITY_DOMAIN = 'transport-identity';

export async function checkIdentityCoupling(input: {
  readonly home: string;
  readonly nodeId: string;
  readonly registry: Pick<Registry, 'domains'>;
  readonly maxFileBytes: number;
}): Promise<void> {
  const domain = input.registry.domains().find((d) => d.descriptor.domain === IDENTITY_DOMAIN);
  const file = domain?.descriptor.files[0];
  if (file === undefined) return;
  const refuse = (why: string) =>
    new FleetError(
      'NODE_ID_MISMATCH',
      `refusing to serve as --node-id ${input.nodeId}: ${why} (the identity file is fail-closed coupled to --node-id, contract §10.2)`,
      {
        suggestions: [
          `start the controller with the --node-id ${file.path} names, or install transport-identity from the repository`,
        ],
      },
    );
  let expected: unknown;
  try {
    const live = await readLive(input.home, targetOf(input.home, file.path), input.maxFileBytes);
    if (live === null) return;
    const { value } = parseYaml(decodeText(live.bytes, file.path), file.path, 'NODE_ID_MISMATCH');
    expected =
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? (value as Record<string, unknown>)['expected_node']
        : undefined;
  } catch (error) {
    const why = isFleetError(error) ? `${error.code}: ${error.message}` : String(error);
    throw refuse(`${file.path} cannot be read as an identity file (${why})`);
  }
  if (typeof expected !== 'string') {
    throw refuse(`${file.path} has no expected_node`);
  }
  if (expected !== input.nodeId) {
    throw refuse(`${file.path} says expected_node ${JSON.stringify(expected)}`);
  }
}
