/**
 * Colour in human output (contract §7: human output is for people, `--json` for programs). Whether
 * to colour is decided once per command from its flag, its environment and its stdout
 * ({@link colourEnabled}, pure); what a state looks like is a {@link Palette}. Plain is the
 * default: a palette that colours is only built when the decision says so. picocolors is inside
 * the command entry's one file (scripts/bundle.mjs), so importing it here costs no file.
 */
import pc from 'picocolors';

/** What decides colour: the `--color`/`--no-color` flag, `--json`, the environment, stdout. */
export interface ColourInputs {
  /** `--color` (true), `--no-color` (false), neither (undefined). */
  readonly flag: boolean | undefined;
  readonly json: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is a terminal. */
  readonly isTTY: boolean;
}

/**
 * Colour or not, in this order: `--json` never (stdout is one document); the flag; `NO_COLOR`
 * with any non-empty value (no-color.org) off, even under `FORCE_COLOR` — the user's opt-out wins
 * over a CI-wide default; `FORCE_COLOR` on unless `0` or `false`; `TERM=dumb` off; else a
 * terminal on stdout.
 */
export function colourEnabled(inputs: ColourInputs): boolean {
  if (inputs.json) return false;
  if (inputs.flag !== undefined) return inputs.flag;
  const { NO_COLOR: noColor, FORCE_COLOR: forceColor, TERM: term } = inputs.env;
  if (noColor !== undefined && noColor !== '') return false;
  if (forceColor !== undefined) return forceColor !== '0' && forceColor !== 'false';
  if (term === 'dumb') return false;
  return inputs.isTTY;
}

/** How human output marks what matters; every function returns its text unchanged when plain. */
export interface Palette {
  readonly enabled: boolean;
  /** A state or outcome word, in the colour of what it asks of the operator. */
  state(state: string, text?: string): string;
  /** A unified diff, line by line: additions green, removals red, hunk headers cyan. */
  diff(text: string): string;
  /** Headers and names. */
  bold(text: string): string;
  /** What is there for reference only (hints, hashes). */
  dim(text: string): string;
}

/** Each state's tone: green nothing to do, yellow a known change to make, red a person's call. */
export type Tone = 'good' | 'change' | 'attention' | 'neutral';

const TONES: Readonly<Record<string, Tone>> = {
  // Nothing to do.
  current: 'good',
  ok: 'good',
  applied: 'good',
  installed: 'good',
  unchanged: 'good',
  verified: 'good',
  active: 'good',
  running: 'good',
  // A change fleet knows how to make, or one to wait for.
  stale: 'change',
  drifted: 'change',
  missing: 'change',
  install: 'change',
  planned: 'change',
  pending: 'change',
  skipped: 'change',
  unreachable: 'change',
  grace: 'change',
  // A person has to decide: hand changes, refusals, failures.
  modified: 'attention',
  diverged: 'attention',
  deleted: 'attention',
  unsupported: 'attention',
  unmanaged: 'attention',
  error: 'attention',
  attention: 'attention',
  failed: 'attention',
  denied: 'attention',
  refused: 'attention',
  blocked: 'attention',
  revoked: 'attention',
  expired: 'attention',
  'rolled-back': 'attention',
};

/** The tone of a state word; anything not listed is neutral (printed plain). */
export function stateTone(state: string): Tone {
  return TONES[state] ?? 'neutral';
}

const identity = (text: string) => text;

/** The palette that changes nothing: pipes, `--json`, `NO_COLOR`, `--no-color`. */
export const plainPalette: Palette = {
  enabled: false,
  state: (state, text = state) => text,
  diff: identity,
  bold: identity,
  dim: identity,
};

/**
 * The palette for a decision: plain, or picocolors'.
 */
export function loadPalette(enabled: boolean): Promise<Palette> {
  return Promise.resolve(enabled ? colourPalette() : plainPalette);
}

/** picocolors' palette, colours forced on (the decision was made by {@link colourEnabled}). */
function colourPalette(): Palette {
  const colours = pc.createColors(true);
  const tone: Record<Tone, (text: string) => string> = {
    good: colours.green,
    change: colours.yellow,
    attention: colours.red,
    neutral: identity,
  };
  const diffLine = (line: string): string => {
    if (line.startsWith('+++') || line.startsWith('---')) return colours.bold(line);
    if (line.startsWith('+')) return colours.green(line);
    if (line.startsWith('-')) return colours.red(line);
    if (line.startsWith('@@')) return colours.cyan(line);
    return line;
  };
  return {
    enabled: true,
    state: (state, text = state) => tone[stateTone(state)](text),
    diff: (text) => text.split('\n').map(diffLine).join('\n'),
    bold: colours.bold,
    dim: colours.dim,
  };
}
