/**
 * A command gets its verb's service from a child of `FleetCommand.services` (src/base-command.ts):
 * a test that runs a command in its own process puts a child container with a fake service there,
 * and asserts on what the command asked the service and printed. The real services, end to end:
 * test/e2e.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { REGISTRY_TOKENS, type DriftReport, type Registered } from '@fleet/core';
import { execute } from '@fleet/core/command';
import {
  container,
  REGISTRY_SOURCE,
  type DependencyContainer,
  type RegistrySource,
} from '@fleet/core/di';
import { DriftService, type DriftOptions, type DriftOutcome } from '@fleet/operator/drift';
import { FleetCommand } from '../src/base-command.js';

const CLI = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(CLI, 'bin/run.js');

/** A drift service that answers one canned report and records what it was asked. */
class FakeDrift {
  readonly asked: DriftOptions[] = [];
  constructor(private readonly report: DriftReport) {}
  async run(options: DriftOptions): Promise<DriftOutcome> {
    this.asked.push(options);
    options.onHost?.(this.report.hosts[0] as DriftReport['hosts'][number]);
    return Promise.resolve({ report: this.report, written: [] });
  }
}

/**
 * A drift service built in the command's container, which asks for the registry as the real one
 * does and then records the domains the container itself holds under the registry's token.
 */
class RegistryReadingDrift {
  readonly domainsInContainer: string[] = [];
  readonly domainsInRegistry: string[] = [];
  constructor(private readonly scope: DependencyContainer) {}
  async run(): Promise<DriftOutcome> {
    const registry = await this.scope.resolve<RegistrySource>(REGISTRY_SOURCE).registry();
    this.domainsInRegistry.push(...registry.domains().map((d) => d.descriptor.domain));
    const held = this.scope.resolveAll<Registered<{ domain: string }>>(REGISTRY_TOKENS.domain);
    this.domainsInContainer.push(...held.map((d) => d.descriptor.domain).sort());
    return { report, written: [] };
  }
}

const report: DriftReport = {
  schema: 'fleet.drift/v1',
  generatedAt: '2026-12-06T00:00:00.000Z',
  repoCommit: '0123456789abcdef0123456789abcdef01234567',
  canonicalVersion: '1.0.0',
  summary: { hosts: 1, current: 0, drifted: 1, unreachable: 0, denied: 0, errors: 0 },
  hosts: [
    {
      host: 'node-01',
      status: 'drifted',
      items: [{ layer: 'file', domain: 'notes', path: '~/.notes', state: 'stale' }],
    },
  ],
};

/** Runs `fleet ARGS` in this process; stdout is captured, the exit code read and reset. */
async function runInProcess(args: string[]): Promise<{ stdout: string; exitCode: number }> {
  const chunks: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  };
  try {
    await execute({ dir: BIN, args });
  } finally {
    process.stdout.write = write;
  }
  const exitCode = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { stdout: chunks.join(''), exitCode };
}

describe('a command resolves its service from the container', () => {
  let repo: string;
  let parent: DependencyContainer | undefined;
  before(async function () {
    repo = join(await mkdtemp(join(tmpdir(), 'fleet-cli-services-')), 'fleet');
    const init = spawnSync(process.execPath, [BIN, 'init', repo], { encoding: 'utf8' });
    expect(init.status, init.stderr).to.equal(0);
    parent = FleetCommand.services;
  });
  after(async () => {
    FleetCommand.services = parent;
    await rm(join(repo, '..'), { recursive: true, force: true });
  });

  it('fleet drift: the flags become the options, the fake answer is printed, its exit code kept', async () => {
    const fake = new FakeDrift(report);
    const scope = container.createChildContainer();
    scope.register(DriftService, { useValue: fake as unknown as DriftService });
    FleetCommand.services = scope;
    const { stdout, exitCode } = await runInProcess([
      'drift',
      '--repo',
      repo,
      '--host',
      'node-01',
      '--concurrency',
      '3',
      '--json',
    ]);
    expect(fake.asked).to.have.length(1);
    expect(fake.asked[0]).to.include({ concurrency: 3, timeoutMs: 10_000 });
    expect(fake.asked[0]?.hosts).to.deep.equal(['node-01']);
    expect(fake.asked[0]?.domains).to.equal(undefined);
    const printed = JSON.parse(stdout) as DriftReport;
    expect(printed.summary).to.deep.equal(report.summary);
    expect(exitCode).to.equal(1); // a drifted host (contract §7)
  });

  it("the registry a verb's service asks for is registered in that command's container", async () => {
    let built: RegistryReadingDrift | undefined;
    const scope = container.createChildContainer();
    scope.register(DriftService, {
      useFactory: (commandScope) =>
        (built = new RegistryReadingDrift(commandScope)) as unknown as DriftService,
    });
    FleetCommand.services = scope;
    const { exitCode } = await runInProcess(['drift', '--repo', repo, '--json']);
    expect(exitCode).to.equal(1);
    expect(built?.domainsInRegistry).to.include('router');
    expect(built?.domainsInContainer).to.deep.equal(built?.domainsInRegistry);
    // The command's own child container held them: the one the test handed over did not.
    expect(scope.isRegistered(REGISTRY_TOKENS.domain, true)).to.equal(false);
  });
});
