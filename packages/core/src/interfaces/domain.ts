/**
 * A domain's declaration: the files it owns, how each is managed, which host variables its
 * templates may use and which process actions are coupled to its files. Declarations are plain
 * data so they survive crossing the plugin boundary (contract §2).
 */

/** `whole`: the file equals the rendered canonical file. `block`: only a delimited block is managed. */
export type FileKind = 'whole' | 'block';

/** What the controller accepts as content for a file (fail-closed: nothing else is guessed). */
export type FileFormat = 'yaml' | 'json' | 'markdown' | 'text';

/** The two lines delimiting a managed block; each must be a whole line of the file. */
export interface BlockMarkers {
  /** The line that opens the block (`# fleet:gitconfig:begin`). */
  readonly begin: string;
  /** The line that closes the block. */
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
  /** Whether the whole file or only a delimited block of it is managed. */
  readonly kind: FileKind;
  /** What the controller accepts as its content. */
  readonly format: FileFormat;
  /** Required for `block` files: the lines delimiting the managed block. */
  readonly markers?: BlockMarkers;
  /**
   * A repository-declared file's mode (contract §10.4), four octal digits (`"0600"`): a `whole`
   * file is written with it and drift reports a live file with another; a `block` file gets it
   * only when fleet creates the file (the rest of the file, mode included, is the host user's).
   */
  readonly mode?: string;
  /**
   * A repository-declared file's coupled action (contract §10.4): the id of an action in each
   * node's own policy (`domains.<domain>.actions.<id>`), run after the file is written when it
   * changed. Never an argv.
   */
  readonly action?: string;
  /**
   * `false` for a repository-declared file whose source is not a template (contract §10.4, a files
   * entry's `template: false`): copied as it is, braces and all — no host variable rendered, and
   * the node resolves no secret in it. Absent: a template, as every canonical file.
   */
  readonly template?: false;
}

/**
 * A path the domain writes that has no canonical file of its own (a derived copy such as the
 * router's installed volume). It is part of the domain's allowlist on the node.
 */
export interface DerivedPath {
  /** Stable id within the domain, distinct from its managed files' ids. */
  readonly id: string;
  /** Default location on the node, `~/`-relative. */
  readonly path: string;
  /** A host variable that overrides `path` for a host (operator side). */
  readonly pathVariable?: string;
  readonly format: FileFormat;
  /** The managed file it is derived from. */
  readonly derivedFrom: string;
  /** One line for reports. */
  readonly description: string;
}

/** A process action owned by a domain's installer (principle 4: one operation with the write). */
export interface CoupledAction {
  /** Stable kind (`write-volume`, `reload`, `restart-controller`). */
  readonly kind: string;
  /** One line for plans and reports. */
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
  /** The file's content (a template: `{{ host.NAME }}`, `{{ secret.NAME }}`). */
  readonly content: string;
}

/**
 * Everything the core and the controller know about a domain without loading its code: the
 * registry, the node's allowlist, rendering and drift all work from this plain data.
 */
export interface DomainDeclaration {
  /** The domain's name (`router`); unique across every loaded plugin. */
  readonly domain: string;
  /** One line for `fleet validate`, the controller's catalog and reports. */
  readonly description: string;
  /**
   * The files it manages from canonical files in the repo (at least one, unless the domain's files
   * are declared in the repository: {@link DomainDeclaration.repoManifest}).
   */
  readonly files: readonly ManagedFile[];
  /**
   * For a domain whose files are declared in the repository (the files domain, contract §10.4):
   * the manifest listing them, relative to `domains/<domain>/` (`files.yaml`). The domain's
   * installer parses it (`Installer.repoFiles`); the core adds those files to the declaration at
   * the commit it reads, and a node accepts their paths only where its policy's
   * `domains.<domain>.patterns` match (contract §5.1).
   */
  readonly repoManifest?: string;
  /** Paths it writes without a canonical file of their own (on the node's allowlist too). */
  readonly derivedPaths?: readonly DerivedPath[];
  /** Host variables its templates may use; any other `{{ host.NAME }}` fails the render. */
  readonly hostVariables: readonly string[];
  /** The process actions an install runs with the write (principle 4), or `none`. */
  readonly coupling: Coupling;
  /** How many backups of each file the node keeps (default 10). */
  readonly backups?: number;
  /** Canonical files `fleet init` writes into a new repo. */
  readonly examples?: readonly ExampleFile[];
}
