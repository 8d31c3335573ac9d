/**
 * A domain's declaration: the files it owns, how each is managed, which host variables its
 * templates may use and which process actions are coupled to its files. Declarations are plain
 * data so they survive crossing the plugin boundary (SPEC §2).
 */

/** `whole`: the file equals the rendered canonical file. `block`: only a delimited block is managed. */
export type FileKind = 'whole' | 'block';

/** What the controller accepts as content for a file (fail-closed: nothing else is guessed). */
export type FileFormat = 'yaml' | 'json' | 'markdown' | 'text';

export interface BlockMarkers {
  readonly begin: string;
  readonly end: string;
}

/** One file a domain manages from a canonical file in the repo. */
export interface ManagedFile {
  /** Stable id within the domain (`router.yaml`). */
  readonly id: string;
  /** Default location on the node, `~/`-relative (`~/.config/router/router.yaml`). */
  readonly path: string;
  /** A host variable that, when set in `hosts/<host>.yaml`, overrides `path` for that host. */
  readonly pathVariable?: string;
  /** The canonical source, relative to `domains/<domain>/` in the repo. */
  readonly canonical: string;
  readonly kind: FileKind;
  readonly format: FileFormat;
  /** Required for `block` files: the lines delimiting the managed block. */
  readonly markers?: BlockMarkers;
}

/**
 * A path the domain writes that has no canonical file of its own (a derived copy such as the
 * router's installed volume). It is part of the domain's allowlist on the node.
 */
export interface DerivedPath {
  readonly id: string;
  readonly path: string;
  readonly pathVariable?: string;
  readonly format: FileFormat;
  /** The managed file it is derived from. */
  readonly derivedFrom: string;
  readonly description: string;
}

/** A process action owned by a domain's installer (principle 4: one operation with the write). */
export interface CoupledAction {
  /** Stable kind (`write-volume`, `reload`, `restart-controller`). */
  readonly kind: string;
  readonly description: string;
}

/** `none`, or the process actions every install of the domain runs after writing its files. */
export type Coupling =
  | { readonly kind: 'none' }
  | { readonly kind: 'process'; readonly actions: readonly CoupledAction[] };

/** An example canonical file written by `fleet init`. */
export interface ExampleFile {
  /** Relative to `domains/<domain>/`. */
  readonly path: string;
  readonly content: string;
}

export interface DomainDeclaration {
  /** The domain's name (`router`); unique across every loaded plugin. */
  readonly domain: string;
  readonly description: string;
  readonly files: readonly ManagedFile[];
  readonly derivedPaths?: readonly DerivedPath[];
  /** Host variables its templates may use; any other `{{ host.NAME }}` fails the render. */
  readonly hostVariables: readonly string[];
  readonly coupling: Coupling;
  /** How many backups of each file the node keeps (default 10). */
  readonly backups?: number;
  /** Canonical files `fleet init` writes into a new repo. */
  readonly examples?: readonly ExampleFile[];
}
