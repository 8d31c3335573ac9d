// The first day on real machines (docs/getting-started.md): `fleet release` and `fleet host add`
// on two hosts that are network namespaces with their own sshd and systemd --user manager
// (test/src/netns-host.ts, built into test/dist by `npm run build`). Reported, one run each: the
// release's wall time and artifact size, each enrollment's wall time and the bytes it sent, and a
// second `host add` of an enrolled host, which must send nothing (a correctness check). Also the
// count of commands docs/getting-started.md's walkthrough takes (goal: at most 10). Needs root,
// iproute2, sshd and systemd; without them the rows are skipped with the reason.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanEnv, renderTable, repoRoot, round } from './lib.js';

export const name = 'enroll';
export const description =
  'fleet release, then fleet host add on two network-namespace hosts (sshd, systemd --user)';

const FLEET = path.join(repoRoot, 'packages', 'cli', 'bin', 'run.js');
const MAX_COMMANDS = 10;

/** The commands of getting-started.md's walkthrough: the lines of its first sh block. */
export function walkthroughCommands(markdown) {
  const block = /```sh\n([\s\S]*?)```/.exec(markdown)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line !== '');
}

function fleet(args, env) {
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, [FLEET, ...args], { env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (run.status !== 0) {
    throw new Error(
      `fleet ${args.slice(0, 3).join(' ')} exited ${run.status}: ${run.stderr.trim()}`,
    );
  }
  return { ms, json: args.includes('--json') ? JSON.parse(run.stdout) : null };
}

function fingerprintOf(line) {
  const blob = Buffer.from(line.split(' ')[1], 'base64');
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

export async function run() {
  const commands = walkthroughCommands(
    readFileSync(path.join(repoRoot, 'docs', 'getting-started.md'), 'utf8'),
  );
  const base = { name, description, commands: commands.length, maxCommands: MAX_COMMANDS };
  const over = commands.length > MAX_COMMANDS;
  const harness = path.join(repoRoot, 'test', 'dist', 'src', 'netns-host.js');
  const { startNetnsHosts } = await import(pathToFileURL(harness).href);
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-bench-enroll-'));
  const key = path.join(dir, 'operator_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', key]);
  const publicKey = readFileSync(`${key}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  let skipped = null;
  const context = {
    skip() {
      throw Object.assign(new Error('skipped'), { skipped: true });
    },
    test: { type: 'hook', title: 'bench enroll', parent: { fullTitle: () => 'bench enroll' } },
  };
  let hosts = [];
  try {
    try {
      hosts = await startNetnsHosts(context, [{ name: 'alpha' }, { name: 'beta' }], {
        authorizedKey: publicKey,
      });
    } catch (error) {
      if (!error.skipped) throw error;
      skipped = 'needs root, network namespaces, sshd and systemd: the reason is on stderr above';
    }
    if (skipped !== null) return { ...base, ok: true, over, skipped };
    const env = cleanEnv({
      FLEET_CREDENTIALS: path.join(dir, 'config', 'credentials.json'),
      SSH_AUTH_SOCK: '',
    });
    const repo = path.join(dir, 'fleet');
    fleet(['init', repo, '--no-example-host'], env);
    const release = fleet(['release', '--confirm', '--repo', repo, '--json'], env);
    const add = (host, extra = []) =>
      fleet(
        [
          'host',
          'add',
          host.name,
          '--ssh',
          `${host.user}@${host.address}`,
          '--identity',
          key,
          '--host-key',
          fingerprintOf(host.hostKey),
          '--confirm',
          '--json',
          '--repo',
          repo,
          ...extra,
        ],
        env,
      );
    const rows = [];
    for (const host of hosts) {
      const enrolled = add(host);
      rows.push({ what: `host add ${host.name}`, ms: enrolled.ms, bytes: enrolled.json.bytesSent });
    }
    const again = add(hosts[0]);
    rows.push({
      what: `host add ${hosts[0].name} again`,
      ms: again.ms,
      bytes: again.json.bytesSent,
    });
    const resent = again.json.bytesSent !== 0 || again.json.outcome !== 'unchanged';
    return {
      ...base,
      ok: !resent,
      over,
      release: { ms: round(release.ms), bytes: release.json.bytes },
      enrollments: rows.map((row) => ({ ...row, ms: round(row.ms) })),
      ...(resent ? { error: 'a second host add of an enrolled host sent the artifact again' } : {}),
    };
  } finally {
    for (const host of hosts) await host.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function format(result) {
  const lines = [
    `getting-started.md walkthrough: ${result.commands} commands (goal ≤ ${result.maxCommands}): ${result.over ? 'OVER' : 'ok'}`,
  ];
  if (result.skipped) return [...lines, `host add rows skipped (${result.skipped})`].join('\n');
  lines.push(
    renderTable(
      [
        { key: 'what', label: 'step' },
        { key: 'ms', label: 'wall', align: 'right' },
        { key: 'bytes', label: 'bytes sent / size', align: 'right' },
      ],
      [
        { what: 'fleet release', ms: `${result.release.ms} ms`, bytes: `${result.release.bytes}` },
        ...result.enrollments.map((row) => ({
          what: row.what,
          ms: `${row.ms} ms`,
          bytes: `${row.bytes}`,
        })),
      ],
    ),
  );
  return lines.join('\n');
}
