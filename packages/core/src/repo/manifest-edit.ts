/**
 * Edits of fleet.yaml made by fleet's own verbs (`fleet host add|remove`, `fleet release`,
 * `fleet lab build`), pure: the text is edited as a YAML document — comments, key order and the
 * rest of the file stay as the operator wrote them — and the result must itself be a valid
 * fleet.yaml (contract §3), or the edit throws before anything is written.
 */
import type { PinnedPlugin } from '../schemas/runtime-plugins.js';
import type { HostEntry } from './schema.js';
import { FleetError } from '../errors.js';
import { parseManifest } from './load.js';
import { yamlLibrary } from '../yaml.js';

/** One `artifacts` entry (contract §3). */
export interface ArtifactPin {
  readonly version: string;
  readonly file: string;
  readonly sha256: string;
  readonly commit: string;
  /** The base64 body of its release signature (ADR 0019). */
  readonly signature?: string;
  /** The Node.js it ships per platform (docs/releases.md). */
  readonly node?: readonly {
    readonly platform: string;
    readonly version: string;
    readonly file: string;
    readonly sha256: string;
  }[];
}

function render(doc: ReturnType<ReturnType<typeof yamlLibrary>['parseDocument']>): string {
  const text = doc.toString({ lineWidth: 0, flowCollectionPadding: false });
  parseManifest(text); // what a verb writes must itself validate
  return text;
}

/** fleet.yaml's text with `hosts.<name>` set to `entry` (`null`: removed). */
export function manifestWithHost(text: string, name: string, entry: HostEntry | null): string {
  const yaml = yamlLibrary();
  const doc = yaml.parseDocument(text);
  if (entry === null) doc.deleteIn(['hosts', name]);
  else doc.setIn(['hosts', name], doc.createNode(entry, { flow: false }));
  const hosts = doc.get('hosts');
  if (yaml.isMap(hosts)) hosts.flow = false;
  return render(doc);
}

/**
 * fleet.yaml's text with `pin` in `artifacts` — replacing an entry of the same version, else
 * appended — and, with `canonical`, `canonicalVersion: pin.version`.
 */
export function manifestWithArtifact(text: string, pin: ArtifactPin, canonical: boolean): string {
  const yaml = yamlLibrary();
  const doc = yaml.parseDocument(text);
  const node = doc.createNode({ ...pin });
  const artifacts = doc.get('artifacts');
  if (yaml.isSeq(artifacts)) {
    artifacts.flow = false;
    const at = artifacts.items.findIndex(
      (item) => yaml.isMap(item) && item.get('version') === pin.version,
    );
    if (at === -1) artifacts.add(node);
    else artifacts.set(at, node);
  } else doc.set('artifacts', doc.createNode([pin]));
  if (canonical) doc.set('canonicalVersion', pin.version);
  return render(doc);
}

/** fleet.yaml's text with `plugin` pinned in `plugins` (an entry of the same name replaced). */
export function manifestWithPlugin(text: string, plugin: PinnedPlugin): string {
  const yaml = yamlLibrary();
  const doc = yaml.parseDocument(text);
  const node = doc.createNode({
    name: plugin.name,
    version: plugin.version,
    sha256: plugin.sha256,
  });
  const plugins = doc.get('plugins');
  if (yaml.isSeq(plugins)) {
    plugins.flow = false;
    const at = plugins.items.findIndex(
      (item) => yaml.isMap(item) && item.get('name') === plugin.name,
    );
    if (at === -1) plugins.add(node);
    else plugins.set(at, node);
  } else doc.set('plugins', doc.createNode([plugin]));
  return render(doc);
}

/** fleet.yaml's text with `key` among `signing.keys` (appended when absent). */
export function manifestWithSigningKey(text: string, key: string): string {
  const yaml = yamlLibrary();
  const doc = yaml.parseDocument(text);
  const keys = doc.getIn(['signing', 'keys']);
  if (yaml.isSeq(keys)) {
    if (keys.items.some((item) => yaml.isScalar(item) && item.value === key)) return text;
    keys.flow = false;
    keys.add(doc.createNode(key));
  } else doc.setIn(['signing', 'keys'], doc.createNode([key]));
  return render(doc);
}

/**
 * fleet.yaml's text with a new domain wired in (`fleet plugins new --wire`): declared under
 * `domains` (`unattended: deny`, as `fleet init` declares each) and appended to each of `hosts`'
 * `domains`. The domain must be in neither yet; each host must exist.
 */
export function manifestWithDomain(text: string, domain: string, hosts: readonly string[]): string {
  const manifest = parseManifest(text);
  const listed = Object.entries(manifest.hosts)
    .filter(([, entry]) => entry.domains.includes(domain))
    .map(([name]) => name);
  if (domain in manifest.domains || listed.length > 0) {
    throw new FleetError(
      'USAGE',
      `fleet.yaml already has domain ${domain}${listed.length > 0 ? ` (hosts ${listed.join(', ')})` : ''}: nothing was changed`,
    );
  }
  const unknown = hosts.filter((host) => manifest.hosts[host] === undefined);
  if (unknown.length > 0) {
    throw new FleetError(
      'UNKNOWN_HOST',
      `fleet.yaml has no host ${unknown.join(', ')} (it has ${Object.keys(manifest.hosts).join(', ') || 'none'}): nothing was changed`,
    );
  }
  const yaml = yamlLibrary();
  const doc = yaml.parseDocument(text);
  const domains = doc.get('domains');
  if (yaml.isMap(domains)) {
    domains.flow = false;
    domains.set(domain, doc.createNode({ unattended: 'deny' }));
  } else doc.set('domains', doc.createNode({ [domain]: { unattended: 'deny' } }));
  for (const host of hosts) {
    const list = doc.getIn(['hosts', host, 'domains']);
    if (yaml.isSeq(list)) list.add(doc.createNode(domain));
    else doc.setIn(['hosts', host, 'domains'], doc.createNode([domain]));
  }
  return render(doc);
}

/**
 * A host variables file's text (`hosts/<host>.yaml`; `null`: none yet) with `name` set to
 * `value` when it has no such variable; the rest stays as written.
 */
export function hostVariablesWith(text: string | null, name: string, value: string): string {
  const yaml = yamlLibrary();
  const doc = yaml.parseDocument(text ?? '');
  if (doc.errors.length > 0 || !(yaml.isMap(doc.contents) || doc.contents === null)) {
    throw new FleetError('HOST_FILE_INVALID', 'a host variables file is not a YAML mapping');
  }
  if (doc.has(name)) return text ?? '';
  doc.set(name, value);
  return doc.toString({ lineWidth: 0 });
}
