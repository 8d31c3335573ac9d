/** Human renderings of the runtime verbs' results (plain text; --json prints the data). */
import type { BootstrapPlan, RuntimeStatusResponse } from '@fleet/core';
import { recoveryCommand } from './follow.js';

const short = (id: string | null | undefined): string => (id ? id.slice(0, 12) : '(none)');

export function renderBootstrapPlan(plan: BootstrapPlan): string {
  return [
    `bootstrap plan ${plan.id}`,
    `  host        ${plan.host} (node id ${plan.nodeId}, ${plan.platform}, supervisor ${plan.supervisor})`,
    `  route       ${plan.route === 'ssh' ? 'SSH recovery receiver (apply needs --recover)' : 'the controller'}`,
    `  artifact    ${plan.artifact.file}: ${plan.artifact.package}@${plan.artifact.version}, sha256 ${plan.artifact.sha256}, commit ${plan.artifact.commit ?? '(not listed in fleet.yaml)'}`,
    `  prior       ${short(plan.prior.build)} (observed through ${plan.prior.observedThrough})`,
    `  repo        ${plan.repoCommit ?? '(no commit)'}`,
    `  protocol    ${plan.protocol}`,
    `  catalog     domains ${plan.target.catalog.domains.join(', ') || '(none)'}; adapters ${plan.target.catalog.bootstrapAdapters.join(', ')}`,
    ...(plan.listen ? [renderListen(plan.listen)] : []),
  ].join('\n');
}

/** The plan's listen: bind, port, TLS and the pin, the Host names (issue 35). */
function renderListen(listen: NonNullable<BootstrapPlan['listen']>): string {
  const bind = listen.bind.includes(':') ? `[${listen.bind}]` : listen.bind;
  const tls = listen.tls
    ? `TLS, certificate made on the node${listen.fingerprint ? `, pinned ${listen.fingerprint}` : ''}`
    : 'no TLS';
  const hosts = listen.allowedHosts.length > 0 ? `; Host ${listen.allowedHosts.join(', ')}` : '';
  return `  listen      bind ${bind}, port ${listen.port}, ${tls}${hosts} (fleet.yaml controller URL)`;
}

export function renderRuntimeStatus(
  host: string,
  status: RuntimeStatusResponse,
  through: string,
): string {
  const lines = [
    `${host}: ${status.state} (observed through ${through}; journal ${status.journal}${status.busy ? `; runner ${status.busy} working` : ''})`,
    `  current     ${short(status.observed.pointer)}`,
    `  supervisor  ${short(status.observed.supervisor)} (${status.observed.supervisorState ?? 'not observed'})`,
    `  live        ${short(status.observed.live)}`,
  ];
  if (status.transaction) {
    const t = status.transaction;
    lines.push(
      `  transaction ${t.id} ${t.kind} ${short(t.prior)} -> ${short(t.target)}: ${t.outcome ?? `open at ${t.lastStep}`}${t.planId ? ` (plan ${short(t.planId)})` : ''}`,
    );
    for (const step of t.steps)
      lines.push(`    ${step.seq} ${step.at} ${step.step}: ${step.detail}`);
  }
  if (status.next !== 'none') {
    const command = recoveryCommand(host, status.next);
    lines.push(`  next        ${status.next}${command ? `: ${command}` : ''}`);
  }
  for (const problem of status.problems) lines.push(`  problem     ${problem}`);
  return lines.join('\n');
}
