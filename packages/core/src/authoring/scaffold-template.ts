/** What every file template of `fleet plugins new` is written from (plugin-scaffold.ts). */

export type ScaffoldKind = 'whole' | 'block';

export interface Template {
  readonly name: string;
  readonly domain: string;
  readonly kind: ScaffoldKind;
  readonly path: string;
  readonly comment: string;
  /** The version range of fleet's packages. */
  readonly range: string;
}

export const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
export const camel = (domain: string): string =>
  domain.replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
export const pascal = (domain: string): string =>
  camel(domain).replace(/^[a-z]/, (c) => c.toUpperCase());
/** The domain's host variable the examples render (`npmrc_owner`). */
export const ownerVariable = (domain: string): string => `${domain.replace(/-/g, '_')}_owner`;

/**
 * The example canonical source: what the declaration's `examples` give `fleet init` and `fleet lab
 * up`, and what `fleet plugins new --wire` writes as `domains/<domain>/<domain>`.
 */
export const exampleCanonical = (t: Template): string =>
  `${t.comment} Managed by fleet (domains/${t.domain}/${t.domain}): edit the repository, not this file.\n` +
  `${t.comment} owner: {{ host.${ownerVariable(t.domain)} }}\n`;
