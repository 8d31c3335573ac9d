/**
 * The acceptance kit's pure parts (src/acceptance.ts): the default hand edit of step 5 — a comment
 * line inside the managed part, in the file's own line endings —, where the kit finds the `fleet`
 * CLI, and the check that a coupled action named for the install ran. The whole cycle runs against the real CLI in the scaffold's generated test
 * (test/e2e/plugin-scaffold.test.ts runs it).
 */
import { expect } from 'chai';
import type { DomainDeclaration, Receipt } from '@fleet/core';
import { rolesNotRun, type AcceptanceNodeActions } from '../src/acceptance-actions.js';
import {
  FLEET_BIN_ENV,
  acceptanceUnavailable,
  defaultHandEdit,
  fleetExecutable,
} from '../src/acceptance.js';

type DeclaredFile = DomainDeclaration['files'][number];

const block: DeclaredFile = {
  id: 'npmrc',
  path: '~/.npmrc',
  canonical: 'npmrc',
  kind: 'block',
  format: 'text',
  markers: { begin: '; fleet:npmrc:begin', end: '; fleet:npmrc:end' },
};
const whole: DeclaredFile = {
  id: 'starship',
  path: '~/.config/starship.toml',
  canonical: 'starship.toml',
  kind: 'whole',
  format: 'text',
};

describe('acceptance kit: the default hand edit', () => {
  const table: [title: string, file: DeclaredFile, installed: string, edited: string][] = [
    [
      "a block: a line in the block's comment style, before its end marker",
      block,
      'keep=me\n; fleet:npmrc:begin\nfund=false\n; fleet:npmrc:end\n',
      'keep=me\n; fleet:npmrc:begin\nfund=false\n; edited by hand on the node\n; fleet:npmrc:end\n',
    ],
    [
      "a block in CRLF: the file's own line endings",
      block,
      '; fleet:npmrc:begin\r\nfund=false\r\n; fleet:npmrc:end\r\n',
      '; fleet:npmrc:begin\r\nfund=false\r\n; edited by hand on the node\r\n; fleet:npmrc:end\r\n',
    ],
    [
      'a whole file: a comment line at its end',
      whole,
      'add_newline = false\n',
      'add_newline = false\n# edited by hand on the node\n',
    ],
    [
      'a whole file without a final newline',
      whole,
      'add_newline = false',
      'add_newline = false\n# edited by hand on the node\n',
    ],
  ];
  for (const [title, file, installed, edited] of table) {
    it(title, () => {
      expect(defaultHandEdit(file)(installed)).to.equal(edited);
    });
  }

  it('needs an edit of your own for a JSON file, and a block whose end marker is gone', () => {
    expect(() => defaultHandEdit({ ...whole, format: 'json' })).to.throw(
      TypeError,
      '~/.config/starship.toml is JSON: pass handEdit',
    );
    expect(() => defaultHandEdit(block)('no markers\n')).to.throw(TypeError, 'no end marker');
  });
});

describe('acceptance kit: the fleet CLI it runs', () => {
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env[FLEET_BIN_ENV];
  });
  afterEach(() => {
    if (saved === undefined) delete process.env[FLEET_BIN_ENV];
    else process.env[FLEET_BIN_ENV] = saved;
  });

  it('takes the one named, then $FLEET_BIN', () => {
    process.env[FLEET_BIN_ENV] = '/opt/fleet/bin/run.js';
    expect(fleetExecutable('/usr/local/bin/fleet')).to.equal('/usr/local/bin/fleet');
    expect(fleetExecutable()).to.equal('/opt/fleet/bin/run.js');
    expect(acceptanceUnavailable()).to.equal(undefined);
  });

  it('says why it cannot run without one', () => {
    delete process.env[FLEET_BIN_ENV];
    const path = process.env['PATH'];
    process.env['PATH'] = '/nonexistent';
    try {
      expect(fleetExecutable()).to.equal(undefined);
      expect(acceptanceUnavailable()).to.equal(
        'the acceptance cycle runs the real fleet CLI: set FLEET_BIN to it, or put fleet on PATH',
      );
    } finally {
      process.env['PATH'] = path;
    }
  });
});

describe('acceptance kit: a coupled action must have run', () => {
  const check: AcceptanceNodeActions = {
    actions: { 'npmrc-check': { argv: ['/usr/bin/true', '{file}'] } },
    validate: 'npmrc-check',
  };
  const table: [title: string, actions: Receipt['actions'], why: string | undefined][] = [
    ['its validate action ok', [{ kind: 'validate', status: 'ok', detail: 'x' }], undefined],
    ['no action in the receipt', [], 'the receipt shows no validate action ok (it shows none)'],
    [
      'another role only',
      [{ kind: 'reload', status: 'ok', detail: 'x' }],
      'the receipt shows no validate action ok (it shows reload ok)',
    ],
  ];
  for (const [title, actions, why] of table) {
    it(title, () => {
      expect(rolesNotRun({ actions }, check)).to.equal(why);
    });
  }

  it('asks nothing of an install without node actions', () => {
    expect(rolesNotRun({ actions: [] }, undefined)).to.equal(undefined);
  });
});
