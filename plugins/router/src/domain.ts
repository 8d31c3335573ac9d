import type { DomainDeclaration } from '@fleet/core/plugin';

const EXAMPLE = `# Router configuration: canonical copy, rendered per host by fleet.
# Installing it writes this file and the router's installed volume as one operation.
node: {{ host.node_id }}
listen: 127.0.0.1:8080
routes:
  - match: /api/
    upstream: http://127.0.0.1:9000
  - match: /
    upstream: http://127.0.0.1:3000
`;

/**
 * The router domain (contract §10.1): the operator-home config file and the installed volume the
 * router process actually reads. A file edit does nothing until the volume is written, so an
 * install writes both, then runs the configured reload command.
 */
export const routerDomain = {
  domain: 'router',
  description: "a router's config file and the installed volume the router reads",
  files: [
    {
      id: 'router.yaml',
      path: '~/.config/router/router.yaml',
      pathVariable: 'router_config_path',
      canonical: 'router.yaml',
      kind: 'whole',
      format: 'yaml',
    },
  ],
  derivedPaths: [
    {
      id: 'volume',
      path: '~/.local/share/router/volume/router.yaml',
      pathVariable: 'router_volume_path',
      format: 'yaml',
      derivedFrom: 'router.yaml',
      description: 'the installed volume the router process reads',
    },
  ],
  hostVariables: ['node_id', 'router_config_path', 'router_volume_path'],
  coupling: {
    kind: 'process',
    actions: [
      {
        kind: 'write-volume',
        description: 'write the installed volume with the file, as one operation',
      },
      {
        kind: 'reload',
        description: "run the node policy's reload action the host names, when one is set",
      },
    ],
  },
  examples: [{ path: 'router.yaml', content: EXAMPLE }],
} as const satisfies DomainDeclaration;
