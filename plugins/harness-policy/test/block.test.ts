/**
 * The policy section of the canonical CLAUDE.md (contract §10.3). The managed-block rules
 * themselves (markers, byte-exact splicing) are core's and tested there
 * (`packages/core/test/block.test.ts`).
 */
import { expect } from 'chai';
import { isFleetError, type ErrorCode } from '@fleet/core';
import { extractPolicySection, findBlock, spliceBlock } from '../src/block.js';
import { POLICY_MARKERS } from '../src/domain.js';

const B = POLICY_MARKERS.begin;
const E = POLICY_MARKERS.end;
const BOM = '\ufeff';

/** The error code a call fails with, or `undefined` when it does not throw. */
function codeOf(call: () => unknown): ErrorCode | undefined {
  try {
    call();
  } catch (error) {
    if (isFleetError(error)) return error.code;
    throw error;
  }
  return undefined;
}

describe('harness-policy block: extractPolicySection', () => {
  const table: { name: string; canonical: string; section: string }[] = [
    {
      name: 'the section between the markers',
      canonical: `# Title\n${B}\n## Policy\n- one\n${E}\nfooter\n`,
      section: '## Policy\n- one\n',
    },
    {
      name: 'the whole file when it has no markers',
      canonical: '# Policy\n- one\n',
      section: '# Policy\n- one\n',
    },
    {
      name: 'a whole file without a final newline gets one',
      canonical: '# Policy\n- one',
      section: '# Policy\n- one\n',
    },
    {
      name: 'the BOM of a marker-less file is not part of the section',
      canonical: `${BOM}# Policy\n`,
      section: '# Policy\n',
    },
    {
      name: 'a CRLF canonical gives an LF section (template space)',
      canonical: `x\r\n${B}\r\n- one\r\n${E}\r\n`,
      section: '- one\n',
    },
    { name: 'an empty section', canonical: `x\n${B}\n${E}\n`, section: '' },
  ];
  for (const { name, canonical, section } of table) {
    it(name, () => expect(extractPolicySection(canonical)).to.equal(section));
  }

  it('refuses a canonical with damaged markers rather than guessing a section', () => {
    expect(codeOf(() => extractPolicySection(`${B}\n- one\n`))).to.equal('MARKERS_UNPAIRED');
    expect(codeOf(() => extractPolicySection(`${E}\n${B}\n`))).to.equal('MARKERS_REVERSED');
  });

  it('uses the policy markers by default, as the rest of the plugin does', () => {
    const text = `intro\n${B}\nrule\n${E}\n`;
    expect(findBlock(text)?.body).to.equal('rule\n');
    expect(spliceBlock(text, 'new\n')).to.equal(`intro\n${B}\nnew\n${E}\n`);
  });
});
