// The in-process floor of contract §14's 1,000-host row: what `fleet drift` must at least do, done
// in one Node process with nothing but Node's own modules — read every host's variables, read and
// render each canonical file per host, read each live file and compare the managed part (a block
// file: the text between its markers). No schema, no history, no network, no report: the least
// work that answers "is every file current". Timed by bench/drift-fleet.js like `fleet drift`,
// start-up included.
//
//   node bench/drift-floor.js PLAN.json
//
// PLAN.json (written by bench/drift-fleet.js from the domains' declarations, which a hand-written
// tool would hard-code): { repo, hosts: [{ name, home }], files: [{ path, canonical, kind, markers? }] }.
// Prints { hosts, files, current, differing }.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));

/** hosts/<host>.yaml as the lab writes it: `name: "value"` lines. */
function variablesOf(host) {
  const text = readFileSync(join(plan.repo, 'hosts', `${host}.yaml`), 'utf8');
  const variables = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*):\s*(".*")\s*$/.exec(line);
    if (match) variables[match[1]] = JSON.parse(match[2]);
  }
  return variables;
}

function render(template, variables) {
  return template.replace(
    /\{\{\s*host\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g,
    (_, name) => variables[name],
  );
}

function section(text, markers) {
  const begin = text.indexOf(`${markers.begin}\n`);
  const end = text.indexOf(markers.end, begin);
  return begin === -1 || end === -1 ? null : text.slice(begin + markers.begin.length + 1, end);
}

const canonical = new Map(
  plan.files.map((file) => [file.canonical, readFileSync(join(plan.repo, file.canonical), 'utf8')]),
);
let current = 0;
let differing = 0;
for (const host of plan.hosts) {
  const variables = variablesOf(host.name);
  for (const file of plan.files) {
    const desired = render(canonical.get(file.canonical), variables);
    let live;
    try {
      live = readFileSync(join(host.home, file.path.slice(2)), 'utf8');
    } catch {
      differing += 1;
      continue;
    }
    const same =
      file.kind === 'block'
        ? section(live, file.markers) === section(desired, file.markers)
        : live === desired;
    if (same) current += 1;
    else differing += 1;
  }
}
process.stdout.write(
  `${JSON.stringify({ hosts: plan.hosts.length, files: plan.files.length, current, differing })}\n`,
);
