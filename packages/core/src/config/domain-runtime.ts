/**
 * A registered domain as the operator's verbs use it (contract §6): its declaration, the operator
 * half of its installer (how canonical and live content are viewed), and the installer itself
 * when the plugin provides one. Apart from the targets (targets.ts) because most of config passes
 * domains around — drift's inputs, the probers, the plan — without computing a target.
 */
import { FleetError } from '../errors.js';
import type { DomainDeclaration } from '../interfaces/domain.js';
import type { Installer } from '../interfaces/installer.js';

/**
 * The operator half of an installer: all that reading and planning need (`check`, when the
 * installer has one, refuses desired content the domain cannot accept: it is never sent).
 */
export type OperatorHalf = Pick<Installer, 'view' | 'managed' | 'check'>;

/**
 * A `whole` file's operator half is the same for every domain by definition (contract §6: the whole
 * file equals the rendered canonical): the view is the rendered canonical, the managed part is
 * the whole live file.
 */
export const WHOLE_FILE_VIEW: OperatorHalf = {
  view: (_file, rendered) => rendered,
  managed: (_file, live) => live,
};

/** A registered domain, with its installer when the plugin implements one. */
export interface DomainRuntime {
  readonly declaration: DomainDeclaration;
  /** How to view canonical and live content (the installer's, or the whole-file view). */
  readonly operator: OperatorHalf;
  /** The loaded installer; absent when the plugin declares the domain without behaviour. */
  readonly installer?: Installer;
}

/**
 * The runtime of a domain. A domain declared without an installer can still be *read* when all
 * its files are `whole` (their view needs no domain logic); installing it needs the installer.
 */
export function domainRuntime(
  declaration: DomainDeclaration,
  installer: Installer | undefined,
): DomainRuntime {
  if (installer) return { declaration, operator: installer, installer };
  if (declaration.files.every((file) => file.kind === 'whole')) {
    return { declaration, operator: WHOLE_FILE_VIEW };
  }
  const absent = (): never => {
    throw new FleetError(
      'DOMAIN_BEHAVIOUR_ABSENT',
      `domain ${declaration.domain} has block files but its plugin provides no installer to read them`,
    );
  };
  return { declaration, operator: { view: absent, managed: absent } };
}
