/**
 * Host names in bash completion (issue 35): what the wrapper of @oclif/plugin-autocomplete's bash
 * function takes from the commands' definitions, as a table. (test/integration/did-you-mean.test.ts
 * runs the written function in bash.)
 */
import { expect } from 'chai';
import { hostCompletionBash, hostCompletionInput } from '../src/completion.js';

describe('bash completion of host names: from the command definitions', () => {
  const option = { type: 'option' };
  const boolean = { type: 'boolean' };
  const rows: [
    name: string,
    command: {
      id: string;
      hidden?: boolean;
      args?: Record<string, unknown>;
      flags?: Record<string, { type: string }>;
    },
    hostArg: boolean,
    valueFlags: string[],
  ][] = [
    ['a HOST first argument', { id: 'config:plan', args: { host: {}, domain: {} } }, true, []],
    ['a single HOST argument', { id: 'upgrade', args: { host: {} } }, true, []],
    ['a host that is not first', { id: 'x:y', args: { plan: {}, host: {} } }, false, []],
    ['no arguments', { id: 'drift', flags: { host: option, json: boolean } }, false, ['--host']],
    [
      'a hidden command is left out',
      { id: 'bootstrap:receive', hidden: true, args: { host: {} }, flags: { repo: option } },
      false,
      [],
    ],
    [
      'boolean flags take no value',
      { id: 'apply', flags: { confirm: boolean, timeout: option } },
      false,
      ['--timeout'],
    ],
  ];
  for (const [name, command, hostArg, valueFlags] of rows) {
    it(name, () => {
      const input = hostCompletionInput({ bin: 'fleet', commands: [command] });
      expect(input.hostArgCommands).to.deep.equal(hostArg ? [command.id.split(':').join(' ')] : []);
      expect(input.valueFlags).to.deep.equal(valueFlags);
      expect(input.hostFlags).to.deep.equal(['--accept-drift-on', '--host']);
    });
  }

  it('writes one case pattern per HOST command, and wraps the plugin function for the bin', () => {
    const script = hostCompletionBash({
      bin: 'fleet',
      hostArgCommands: ['config plan', 'upgrade', 'bad"id'],
      valueFlags: ['--repo', '--timeout'],
      hostFlags: ['--host'],
    });
    expect(script).to.contain('" config plan "|" upgrade "|" -none- ") want=1 ;;');
    expect(script).to.not.contain('bad"id');
    expect(script).to.contain('  _fleet_autocomplete\n}');
    expect(script.trimEnd().split('\n').at(-1)).to.equal(
      'complete -F _fleet_host_autocomplete fleet',
    );
  });
});
