// Bench only (bench/README.md): the workload's five whole files (../files.js) as the domain
// `bench-files`, installed by core's reusable whole-file installer. Linked into an isolated oclif
// data directory by the peer benchmarks; never part of the product.
import { defineRegistration, wholeFileInstaller } from '@fleet/core';
import { FILES, HOST_VARIABLES } from '../files.js';

export const BENCH_DOMAIN = 'bench-files';

const declaration = {
  domain: BENCH_DOMAIN,
  description: 'bench workload: five templated whole files',
  files: FILES.map((file) => ({
    id: file.id,
    path: file.path,
    canonical: file.canonical,
    kind: 'whole',
    format: file.format,
  })),
  hostVariables: HOST_VARIABLES,
  coupling: { kind: 'none' },
  examples: FILES.map((file) => ({ path: file.canonical, content: file.published })),
};

export const registration = defineRegistration({
  installers: [{ ...declaration, load: async () => wholeFileInstaller(BENCH_DOMAIN) }],
});

export default function register() {
  return registration;
}
