/**
 * The spelling of a placeholder (contract §4): the ground both the template language
 * (template.ts) and value substitution (substitute.ts) build on, importing neither.
 */

export type PlaceholderNamespace = 'host' | 'secret';

/** The canonical spelling of a placeholder. */
export function placeholder(namespace: PlaceholderNamespace, name: string): string {
  return `{{ ${namespace}.${name} }}`;
}
