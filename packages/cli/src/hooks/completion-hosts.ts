/**
 * Host names in bash completion (issue 35, `../completion.ts`): after @oclif/plugin-autocomplete
 * has written its bash function file — `fleet autocomplete [SHELL]`, which builds it in place, or
 * `autocomplete:create`, which its own hook runs after a plugin is installed — the wrapper that
 * completes `--host` and HOST arguments is appended to it, once. Every other command returns at
 * once, loading nothing.
 */
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Hook } from '@oclif/core';

const hook: Hook<'postrun'> = async function (options) {
  const id = options.Command?.id;
  if (id !== 'autocomplete' && id !== 'autocomplete:create') return;
  // Lazy: every command runs this hook (packages/cli/README.md, Lazy imports kept).
  const { hostCompletionBash, hostCompletionInput } = await import('../completion.js');
  const { config } = options;
  const file = join(config.cacheDir, 'autocomplete', 'functions', 'bash', `${config.bin}.bash`);
  const written = await readFile(file, 'utf8').catch(() => null);
  if (written === null) return; // the plugin wrote no bash function: nothing to wrap
  const wrapper = hostCompletionBash(hostCompletionInput(config));
  if (!written.includes(wrapper)) await appendFile(file, wrapper);
};

export default hook;
