import { expect } from 'chai';
import { stat } from 'node:fs/promises';
import { defineRegistration } from '@fleet/core';
import {
  FixedClock,
  RecordedProcessRunner,
  createFakeHost,
  registryFromHooks,
} from '../src/index.js';

describe('FixedClock', () => {
  it('stands still, advances both clocks, and steps the wall clock alone', () => {
    const clock = new FixedClock('2026-03-01T12:00:00Z');
    expect(clock.now().toISOString()).to.equal('2026-03-01T12:00:00.000Z');
    clock.advance(1500);
    expect(clock.now().toISOString()).to.equal('2026-03-01T12:00:01.500Z');
    expect(clock.monotonicMs()).to.equal(1500);
    clock.set('2026-03-01T11:00:00Z'); // stepped back an hour
    expect(clock.now().toISOString()).to.equal('2026-03-01T11:00:00.000Z');
    expect(clock.monotonicMs()).to.equal(1500);
  });
});

describe('RecordedProcessRunner', () => {
  it('records every request and answers from its script, latest rule first', async () => {
    const runner = new RecordedProcessRunner()
      .on('systemctl --user show', { stdout: 'ActiveState=active\n' })
      .on('systemctl --user restart', { exitCode: 1, stderr: 'failed' }, 1);
    const first = await runner.run({ command: 'systemctl', args: ['--user', 'restart', 'fleet'] });
    const second = await runner.run({ command: 'systemctl', args: ['--user', 'restart', 'fleet'] });
    const show = await runner.run({ command: 'systemctl', args: ['--user', 'show', 'fleet'] });
    expect(first.exitCode).to.equal(1);
    expect(second.exitCode).to.equal(127); // the one-shot rule is spent: nothing else matches
    expect(second.stderr).to.contain('no scripted answer for: systemctl --user restart fleet');
    expect(show.stdout).to.equal('ActiveState=active\n');
    expect(runner.commandLines()).to.deep.equal([
      'systemctl --user restart fleet',
      'systemctl --user restart fleet',
      'systemctl --user show fleet',
    ]);
  });

  it('accepts predicates and computed answers', async () => {
    const runner = new RecordedProcessRunner().on(
      (request) => request.command === 'echo',
      (request) => ({ stdout: request.args.join(' ') }),
    );
    expect((await runner.run({ command: 'echo', args: ['a', 'b'] })).stdout).to.equal('a b');
  });
});

describe('FakeHost', () => {
  it('is a real temporary home that files are written into and read from', async () => {
    const host = await createFakeHost({ nodeId: 'node-09', platform: 'linux' });
    try {
      await host.writeFile('~/.config/app/app.conf', 'a=1\n');
      expect(await host.readText('~/.config/app/app.conf')).to.equal('a=1\n');
      expect(await host.exists('~/.config/app/nope')).to.equal(false);
      expect((await stat(host.resolve('~/.config/app/app.conf'))).mode & 0o777).to.equal(0o600);
      expect(() => host.resolve('~/../escape')).to.throw(/not allowed/);
    } finally {
      await host.dispose();
    }
    expect(await host.exists('~/.config/app/app.conf')).to.equal(false);
  });

  it('reads its secrets through the same env-file chain loader as the controller', async () => {
    const host = await createFakeHost({ secrets: { API_KEY: 'first', OTHER: 'x' } });
    try {
      await host.writeEnvFile('20-override.env', { API_KEY: 'second' });
      await host.writeEnvFile('10-base.env', { API_KEY: 'base', EXTRA: 'e' });
      const secrets = await host.secrets();
      expect(Object.fromEntries(secrets)).to.deep.equal({
        API_KEY: 'second',
        OTHER: 'x',
        EXTRA: 'e',
      });
    } finally {
      await host.dispose();
    }
  });
});

describe('registryFromHooks', () => {
  const plugin = (name: string) => ({ name, version: '1.0.0' });
  const domain = {
    domain: 'demo',
    description: 'demo',
    files: [
      {
        id: 'demo.conf',
        path: '~/.demo.conf',
        canonical: 'demo.conf',
        kind: 'whole',
        format: 'text',
      },
    ],
    hostVariables: [],
    coupling: { kind: 'none' },
  } as const;

  it('attributes a throwing hook to its plugin and keeps the others', async () => {
    const registry = await registryFromHooks([
      { plugin: plugin('good'), hook: () => defineRegistration({ installers: [domain] }) },
      {
        plugin: plugin('broken'),
        hook: () => {
          throw new Error('boom');
        },
      },
    ]);
    expect(registry.domains().map((d) => d.plugin.name)).to.deep.equal(['good']);
    expect(registry.problems).to.have.length(1);
    expect(registry.problems[0]?.plugin).to.equal('broken@1.0.0');
    expect(registry.problems[0]?.message).to.contain('boom');
  });

  it('refuses a plugin built for another plugin API version, naming both', async () => {
    const registry = await registryFromHooks(
      [{ plugin: plugin('future'), hook: () => defineRegistration({ installers: [domain] }) }],
      2,
    );
    expect(registry.domains()).to.deep.equal([]);
    expect(registry.problems[0]?.code).to.equal('PLUGIN_API_MISMATCH');
    expect(registry.problems[0]?.message).to.match(/plugin API 1.*plugin API 2/);
  });
});
