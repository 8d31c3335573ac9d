import { expect } from 'chai';
import { renderDomainForHost } from '@fleet/core';
import { createFakeHost, registryFromHooks, type FakeHost } from '@fleet/testkit';
import register from '../src/register.js';
import { POLICY_MARKERS } from '../src/domain.js';

const plugin = { name: '@fleet/plugin-harness-policy', version: '0.1.0', type: 'core' };

describe('harness-policy plugin registration', () => {
  let host: FakeHost;
  beforeEach(async () => {
    host = await createFakeHost();
  });
  afterEach(() => host.dispose());

  it('is accepted by the core registry with no problems', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    expect(registry.problems).to.deep.equal([]);
    expect(registry.domains().map((d) => d.descriptor.domain)).to.deep.equal(['harness-policy']);
  });

  it('manages CLAUDE.md whole and AGENTS.md / GEMINI.md by block, with no process coupling', async () => {
    const domain = (await registryFromHooks([{ plugin, hook: register }])).domain(
      'harness-policy',
    ).descriptor;
    expect(domain.files.map((f) => [f.path, f.kind])).to.deep.equal([
      ['~/.claude/CLAUDE.md', 'whole'],
      ['~/.codex/AGENTS.md', 'block'],
      ['~/.gemini/GEMINI.md', 'block'],
    ]);
    for (const file of domain.files.filter((f) => f.kind === 'block')) {
      expect(file.markers).to.deep.equal(POLICY_MARKERS);
      expect(file.canonical).to.equal('CLAUDE.md');
    }
    expect(domain.coupling).to.deep.equal({ kind: 'none' });
  });

  it('ships an example CLAUDE.md whose policy section sits between the markers', async () => {
    const domain = (await registryFromHooks([{ plugin, hook: register }])).domain(
      'harness-policy',
    ).descriptor;
    const example = domain.examples?.[0]?.content ?? '';
    const begin = example.indexOf(POLICY_MARKERS.begin);
    const end = example.indexOf(POLICY_MARKERS.end);
    expect(begin).to.be.greaterThan(-1);
    expect(end).to.be.greaterThan(begin);
    const views = renderDomainForHost(domain, 'node-01', {}, () => example);
    expect(views.map((v) => v.content)).to.deep.equal([example, example, example]);
    await host.writeFile('~/.claude/CLAUDE.md', example);
    expect(await host.readText('~/.claude/CLAUDE.md')).to.equal(example);
  });
});
