import type { DomainDeclaration } from '@fleet/core/plugin';

/**
 * The transport-identity domain (contract §10.2): the node's identity file, whose `expected_node` is
 * fail-closed coupled to the controller's `--node-id` flag. Writing the file without restarting
 * the controller with the matching flag would take the node offline, so the install owns both.
 */
export const transportIdentityDomain = {
  domain: 'transport-identity',
  description: "the node identity file, coupled to the controller's --node-id flag",
  files: [
    {
      id: 'transport.yaml',
      path: '~/.config/fleet/transport.yaml',
      canonical: 'transport.yaml',
      kind: 'whole',
      format: 'yaml',
    },
  ],
  hostVariables: ['node_id'],
  coupling: {
    kind: 'process',
    actions: [
      {
        kind: 'update-supervisor-flag',
        description: "record the new --node-id in the controller's supervisor",
      },
      { kind: 'restart-controller', description: 'restart the controller through its supervisor' },
      {
        kind: 'verify-node-id',
        description: 'the restarted controller reports the new node id, else roll back',
      },
    ],
  },
  examples: [
    {
      path: 'transport.yaml',
      content:
        "# The node identity: must equal the controller's --node-id.\nexpected_node: {{ host.node_id }}\n",
    },
  ],
} as const satisfies DomainDeclaration;
