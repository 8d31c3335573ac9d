/**
 * The verbs' services (src/services/) as the CLI gets them: resolved from a tsyringe container,
 * the registry coming from whatever `REGISTRY_SOURCE` that container holds. A test — fleet's or a
 * third party's — swaps in its own registry or fake service with a child container, as here; the
 * whole verbs run end to end in test/e2e (drift, install, adopt-canary, apply, runtime-lab).
 */
import { expect } from 'chai';
import { FleetError, type Registry } from '@fleet/core';
import { container, REGISTRY_SOURCE, type RegistrySource } from '@fleet/core/di';
import { defineRegistration } from '@fleet/core/plugin';
import { registryFromHooks } from '@fleet/testkit';
import { ApplyService } from '../src/services/apply.js';
import { AuditService } from '../src/services/audit.js';
import { BootstrapReceiverService } from '../src/services/bootstrap-receive.js';
import { BootstrapService } from '../src/services/bootstrap.js';
import { ConfigAdoptService } from '../src/services/config-adopt.js';
import { ConfigInstallService } from '../src/services/config-install.js';
import { ConfigPlanService } from '../src/services/config-plan.js';
import { ConfigReadService } from '../src/services/config-read.js';
import { DriftService } from '../src/services/drift.js';
import { HostAddService } from '../src/services/host-add.js';
import { HostRemoveService } from '../src/services/host-remove.js';
import { PluginScaffoldService } from '../src/services/plugins-new.js';
import { ReleaseService } from '../src/services/release.js';
import { ReportRunService } from '../src/services/report-run.js';
import { ScheduleService } from '../src/services/schedule.js';
import { StatusService } from '../src/services/status.js';
import { TokenService } from '../src/services/token.js';
import { UpgradeService } from '../src/services/upgrade.js';
import { ValidateService } from '../src/services/validate.js';

/** A registry source that counts how often a service asked for the registry. */
function countingSource(registry: Registry): RegistrySource & { asked: number } {
  const source = {
    asked: 0,
    registry: () => {
      source.asked += 1;
      return Promise.resolve(registry);
    },
  };
  return source;
}

/** A registry with one domain, `notes`, and nothing else. */
function notesRegistry(): Promise<Registry> {
  return registryFromHooks([
    {
      plugin: { name: 'fleet-plugin-notes', version: '0.1.0' },
      hook: () =>
        defineRegistration({
          installers: [
            {
              domain: 'notes',
              description: 'a notes file (test stand-in)',
              files: [
                {
                  id: 'notes',
                  path: '~/.notes',
                  canonical: 'notes',
                  kind: 'whole',
                  format: 'text',
                },
              ],
              hostVariables: [],
              coupling: { kind: 'none' },
            },
          ],
        }),
    },
  ]);
}

describe('services: resolved from a container', () => {
  it('every service resolves from a child container that holds a registry source', async () => {
    const scope = container.createChildContainer();
    scope.register(REGISTRY_SOURCE, { useValue: countingSource(await notesRegistry()) });
    for (const service of [
      ApplyService,
      AuditService,
      BootstrapReceiverService,
      BootstrapService,
      ConfigAdoptService,
      ConfigInstallService,
      ConfigPlanService,
      ConfigReadService,
      DriftService,
      HostAddService,
      HostRemoveService,
      PluginScaffoldService,
      ReleaseService,
      ReportRunService,
      ScheduleService,
      StatusService,
      TokenService,
      UpgradeService,
      ValidateService,
    ]) {
      expect(scope.resolve<object>(service), service.name).to.be.instanceOf(service);
    }
  });

  it("a service that needs plugins does not resolve from a container without the registry's source", () => {
    expect(() => container.createChildContainer().resolve(DriftService)).to.throw(
      /fleet\.di\.registry-source/,
    );
    // One that needs no plugin does: nothing is injected into it.
    expect(container.createChildContainer().resolve(UpgradeService)).to.be.instanceOf(
      UpgradeService,
    );
  });

  it("drift refuses a domain the container's registry does not know before reading the repository", async () => {
    const source = countingSource(await notesRegistry());
    const scope = container.createChildContainer();
    scope.register(REGISTRY_SOURCE, { useValue: source });
    const failure = await scope
      .resolve(DriftService)
      .run({
        root: '/nonexistent/fleet-repository',
        domains: ['notse'],
        concurrency: 1,
        timeoutMs: 1_000,
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).to.be.instanceOf(FleetError);
    expect((failure as FleetError).code).to.equal('UNKNOWN_DOMAIN');
    expect((failure as FleetError).message).to.contain('registered: notes');
    expect(source.asked).to.equal(1);
  });

  it('a fake service registered in a child container is what a caller of that container gets', () => {
    const fake = { run: () => Promise.reject(new Error('the fake ran')) };
    const scope = container.createChildContainer();
    scope.register(DriftService, { useValue: fake as unknown as DriftService });
    expect(scope.resolve(DriftService)).to.equal(fake);
    // The parent is untouched: its callers still get the real service.
    const real = container.createChildContainer();
    real.register(REGISTRY_SOURCE, { useValue: { registry: notesRegistry } });
    expect(real.resolve(DriftService)).to.be.instanceOf(DriftService);
  });
});
