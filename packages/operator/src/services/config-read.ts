/**
 * `fleet config inventory` and `fleet config export`'s service: the two read-only verbs on one
 * host's managed files — the listing of every managed file and its backups, and one file (or
 * backup) redacted on the node (contract §9). Both read the repository at HEAD for the host's
 * address and credentials, ask its controller once, and write nothing. The registry comes from
 * the container the CLI builds (docs/architecture.md "Services").
 */
import { FleetError, hostEntry, type ExportResponse, type InventoryResponse } from '@fleet/core';
import type { ControllerClient } from '@fleet/core';
import { inject, injectable, REGISTRY_SOURCE, type RegistrySource } from '@fleet/core/di';
import { loadFleetContext } from '../config/context.js';

export type { ExportResponse, InventoryResponse } from '@fleet/core';

/** An exported file that exists on the node: its (redacted) content and what it is. */
export type ExportedFile = Extract<ExportResponse, { readonly exists: true }>;

export interface ConfigInventoryOptions {
  readonly root: string;
  readonly host: string;
  readonly timeoutMs: number;
}

export interface ConfigExportOptions extends ConfigInventoryOptions {
  /** The file on the node, ~/-relative. */
  readonly path: string;
}

@injectable()
export class ConfigReadService {
  constructor(@inject(REGISTRY_SOURCE) private readonly plugins: RegistrySource) {}

  /** `config inventory`: the host's managed files and their backups (size, mtime, sha256, format). */
  async inventory(options: ConfigInventoryOptions): Promise<InventoryResponse> {
    const client = await this.hostClient(options);
    return client.inventory();
  }

  /** `config export`: one file, redacted on the node; FILE_NOT_FOUND when it does not exist. */
  async export(options: ConfigExportOptions): Promise<ExportedFile> {
    const client = await this.hostClient(options);
    const exported = await client.export({ path: options.path });
    if (!exported.exists) {
      throw new FleetError('FILE_NOT_FOUND', `${options.path} does not exist on ${options.host}`);
    }
    return exported;
  }

  /** The host's controller client, from the repository at HEAD (UNKNOWN_HOST before any request). */
  private async hostClient(options: ConfigInventoryOptions): Promise<ControllerClient> {
    const registry = await this.plugins.registry();
    const context = await loadFleetContext({
      root: options.root,
      registry,
      timeoutMs: options.timeoutMs,
    });
    hostEntry(context.repo, options.host);
    return context.client(options.host);
  }
}
