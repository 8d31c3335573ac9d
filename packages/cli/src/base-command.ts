/**
 * The one base command every fleet command extends. It is core's `FleetBaseCommand`
 * (`@fleet/core/command`, shared with every plugin command), which owns the `--json` contract
 * (contract §2, §7): stdout carries exactly one JSON document — the command's result, or the error
 * envelope `{ error: { code, message, exitCode } }` — and the process exits with the stable exit
 * code of the error's code; it also names the repository a verb uses and reads node-path
 * arguments. This class adds what only the CLI's verbs need: the commit a verb read, and the
 * audit heads its answers carried, and the container its verb's service is resolved from
 * (docs/architecture.md "Services").
 *
 * Only types are imported from `@fleet/core` at module level: every command extends this class,
 * `fleet controller serve` — the node agent's start — among them, which must not load core's
 * index or the container (packages/cli/README.md, "Lazy imports kept").
 */
import { FleetBaseCommand, reportedFailure } from '@fleet/core/command';
import type { Command, Interfaces } from '@oclif/core';
import type { Registry, RepoSource } from '@fleet/core';
import type { DependencyContainer, InjectionToken } from '@fleet/core/di';

export type FleetFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof FleetCommand)['baseFlags'] & T['flags']
>;

/** The last failure a command of this process reported (core's; `report-run` logs it). */
export { reportedFailure };

export abstract class FleetCommand extends FleetBaseCommand {
  /**
   * The container every command's own is a child of; unset, tsyringe's root, where the services'
   * `@injectable()` classes resolve. A test that runs a command in its process may put a child
   * container with fakes here (packages/cli/test/service-container.test.ts).
   */
  static services: DependencyContainer | undefined;

  private scope: DependencyContainer | undefined;
  private registryOnce: Promise<Registry> | undefined;

  /**
   * The verb's service, from this command's child container: there the registry source is this
   * command's plugins, assembled the first time a service asks (`loadRegistry`) and then kept,
   * their descriptors registered in that container under `REGISTRY_TOKENS`
   * (docs/adr/0027-the-registry-lives-in-the-container.md).
   */
  protected async service<T>(token: InjectionToken<T>): Promise<T> {
    if (this.scope === undefined) {
      const { container, containerStore, REGISTRY_SOURCE } = await import('@fleet/core/di');
      const scope = (FleetCommand.services ?? container).createChildContainer();
      scope.register(REGISTRY_SOURCE, {
        useValue: {
          registry: () => (this.registryOnce ??= this.loadRegistry(containerStore(scope))),
        },
      });
      this.scope = scope;
    }
    return this.scope.resolve(token);
  }

  /**
   * Names the repository and the commit a verb read (the human output's first line) and warns on
   * stderr about what the working tree left uncommitted, which the verb does not use
   * (docs/classification.md).
   */
  protected async noteSource(source: RepoSource): Promise<void> {
    if (!this.jsonEnabled())
      this.log(`repository ${this.repoRoot ?? ''} commit ${source.commit.slice(0, 12)} (HEAD)`);
    const { uncommittedWarning } = await import('@fleet/core');
    const warning = uncommittedWarning(source);
    if (warning !== '') this.note(warning);
  }

  /**
   * After every verb that talked to a node: the audit heads its answers carried are kept in the
   * operator's state (core client/audit-heads.ts), so `fleet audit verify --host` can tell a node
   * log rewritten behind the operator's back. Never fails the verb: a warning at most.
   */
  protected override async finally(error: Error | undefined): Promise<unknown> {
    if (this.repoRoot !== undefined) {
      const { recordSeenHeads, takeObservedHeads } = await import('@fleet/core');
      const heads = takeObservedHeads();
      if (heads.size > 0) {
        await recordSeenHeads(this.repoRoot, heads, (this.id ?? 'fleet').replace(/:/g, ' ')).catch(
          (failure: unknown) =>
            this.note(
              `warning: the audit heads seen could not be kept: ${(failure as Error).message}`,
            ),
        );
      }
    }
    return super.finally(error);
  }
}
