/**
 * Reading `launchctl print` and deciding from it (pure): whether launchd runs what the plist on
 * disk says — the restart that follows a recorded `--node-id` bootstraps the plist anew only then —
 * and the agent's state in a line, `failed` for a controller that exited non-zero (launchd itself
 * has no failed state: KeepAlive starts it again, launchd.plist(5)).
 */
import { expect } from 'chai';
import { agentState, loadedAsFile } from '../src/adapter.js';
import { parsePrint, type LaunchctlService } from '../src/print.js';

const PRINTED = [
  'gui/501/dev.fleet.controller = {',
  '\tactive count = 1',
  '\tpath = /Users/ada/Library/LaunchAgents/dev.fleet.controller.plist',
  '\tstate = running',
  '',
  '\tprogram = /usr/local/bin/node',
  '\targuments = {',
  '\t\t/usr/local/bin/node',
  '\t\trun.js',
  '\t\t--node-id',
  '\t\tnode-01',
  '\t}',
  '',
  '\tdefault environment = {',
  '\t\tPATH => /usr/bin:/bin:/usr/sbin:/sbin',
  '\t}',
  '',
  '\tenvironment = {',
  '\t\tFLEET_LOG => info',
  '\t\tXPC_SERVICE_NAME => dev.fleet.controller',
  '\t}',
  '',
  '\tpid = 4242',
  '\tlast exit code = (never exited)',
  '}',
].join('\n');

const service = (overrides: Partial<LaunchctlService> = {}): LaunchctlService => ({
  ...parsePrint(PRINTED),
  ...overrides,
});

describe('launchctl print, read', () => {
  it('reads the arguments and the environment blocks, not the default environment', () => {
    expect(parsePrint(PRINTED)).to.deep.include({
      state: 'running',
      pid: 4242,
      arguments: ['/usr/local/bin/node', 'run.js', '--node-id', 'node-01'],
      environment: { FLEET_LOG: 'info', XPC_SERVICE_NAME: 'dev.fleet.controller' },
      lastExitCode: null,
    });
  });

  const file = {
    command: ['/usr/local/bin/node', 'run.js', '--node-id', 'node-01'],
    environment: { FLEET_LOG: 'info' },
  };
  const cases: [string, Parameters<typeof loadedAsFile>[1], boolean][] = [
    ['the same arguments and variables (XPC_* are launchd’s own)', file, true],
    [
      'another --node-id recorded',
      { ...file, command: [...file.command.slice(0, 3), 'node-02'] },
      false,
    ],
    [
      'a variable added',
      { ...file, environment: { ...file.environment, FLEET_FAILPOINT: 'x' } },
      false,
    ],
    ['a variable removed', { ...file, environment: {} }, false],
    ['a variable changed', { ...file, environment: { FLEET_LOG: 'debug' } }, false],
  ];
  for (const [name, plist, same] of cases) {
    it(`the loaded agent ${same ? 'runs' : 'does not run'} the plist on disk: ${name}`, () => {
      expect(loadedAsFile(service(), plist)).to.equal(same);
    });
  }

  const states: [string, LaunchctlService | null, boolean, string][] = [
    ['not loaded', null, false, 'not loaded'],
    ['running, never exited', service(), true, 'running'],
    [
      'running again after a failed run',
      service({ lastExitCode: 1 }),
      true,
      'running (last exit code 1)',
    ],
    [
      'exited 0 (a stop request)',
      service({ state: 'not running', pid: null, lastExitCode: 0 }),
      false,
      'not running (last exit code 0)',
    ],
    [
      'exited non-zero',
      service({ state: 'not running', pid: null, lastExitCode: 3 }),
      false,
      'failed: not running (last exit code 3)',
    ],
    [
      'killed by a signal',
      service({ state: 'not running', pid: null, lastSignal: 'Killed: 9' }),
      false,
      'not running (Killed: 9)',
    ],
  ];
  for (const [name, printed, running, line] of states) {
    it(`says the agent's state: ${name}`, () => {
      expect(agentState(printed, running)).to.equal(line);
    });
  }
});
