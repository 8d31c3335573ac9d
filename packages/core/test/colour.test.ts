/** Colour in human output (issue 17): when to colour, and what a state and a diff look like. */
import { expect } from 'chai';
import {
  colourEnabled,
  loadPalette,
  plainPalette,
  stateTone,
  type ColourInputs,
} from '../src/command/colour.js';

const ESC = '\u001b';

describe('colourEnabled', () => {
  const base: ColourInputs = { flag: undefined, json: false, env: {}, isTTY: true };
  const cases: [string, Partial<ColourInputs>, boolean][] = [
    ['a terminal', {}, true],
    ['a pipe', { isTTY: false }, false],
    ['--json on a terminal', { json: true }, false],
    ['--json with --color', { json: true, flag: true }, false],
    ['--no-color on a terminal', { flag: false }, false],
    ['--color into a pipe', { flag: true, isTTY: false }, true],
    ['--color over NO_COLOR', { flag: true, env: { NO_COLOR: '1' } }, true],
    ['NO_COLOR=1 on a terminal', { env: { NO_COLOR: '1' } }, false],
    ['NO_COLOR=yes (any non-empty value)', { env: { NO_COLOR: 'yes' } }, false],
    ['NO_COLOR empty (not set, per no-color.org)', { env: { NO_COLOR: '' } }, true],
    ['NO_COLOR over FORCE_COLOR', { env: { NO_COLOR: '1', FORCE_COLOR: '1' } }, false],
    ['FORCE_COLOR=1 into a pipe', { isTTY: false, env: { FORCE_COLOR: '1' } }, true],
    ['FORCE_COLOR empty into a pipe', { isTTY: false, env: { FORCE_COLOR: '' } }, true],
    ['FORCE_COLOR=0 on a terminal', { env: { FORCE_COLOR: '0' } }, false],
    ['FORCE_COLOR=false on a terminal', { env: { FORCE_COLOR: 'false' } }, false],
    ['TERM=dumb on a terminal', { env: { TERM: 'dumb' } }, false],
  ];
  for (const [name, change, expected] of cases) {
    it(`${name}: ${expected ? 'colour' : 'plain'}`, () => {
      expect(colourEnabled({ ...base, ...change })).to.equal(expected);
    });
  }
});

describe('palettes', () => {
  it('states take the tone of what they ask: green nothing, yellow a known change, red a person', () => {
    const tones = ['current', 'stale', 'drifted', 'diverged', 'error', 'denied', 'frobbed'].map(
      (state) => `${state}:${stateTone(state)}`,
    );
    expect(tones).to.deep.equal([
      'current:good',
      'stale:change',
      'drifted:change',
      'diverged:attention',
      'error:attention',
      'denied:attention',
      'frobbed:neutral',
    ]);
  });

  it('a disabled palette is the plain one: text unchanged', async () => {
    const palette = await loadPalette(false);
    expect(palette).to.equal(plainPalette);
    expect(palette.state('diverged', 'diverged   ')).to.equal('diverged   ');
    expect(palette.diff('-a\n+b')).to.equal('-a\n+b');
  });

  it('colours states by tone and leaves a neutral word alone', async () => {
    const palette = await loadPalette(true);
    expect(palette.state('current')).to.equal(`${ESC}[32mcurrent${ESC}[39m`);
    expect(palette.state('stale')).to.equal(`${ESC}[33mstale${ESC}[39m`);
    expect(palette.state('diverged')).to.equal(`${ESC}[31mdiverged${ESC}[39m`);
    expect(palette.state('frobbed')).to.equal('frobbed');
  });

  it('colours a unified diff line by line: headers bold, removals red, additions green, hunks cyan', async () => {
    const palette = await loadPalette(true);
    const diff = ['--- live', '+++ desired', '@@ -1 +1 @@', '-old', '+new', ' same'].join('\n');
    expect(palette.diff(diff).split('\n')).to.deep.equal([
      `${ESC}[1m--- live${ESC}[22m`,
      `${ESC}[1m+++ desired${ESC}[22m`,
      `${ESC}[36m@@ -1 +1 @@${ESC}[39m`,
      `${ESC}[31m-old${ESC}[39m`,
      `${ESC}[32m+new${ESC}[39m`,
      ' same',
    ]);
  });
});
