/**
 * The detached helper (see launch.ts): `node switch-helper.js '<HelperInput JSON>'`. Drives the
 * supervisor through `switchNodeId` and logs what happened, one line per step.
 */
import { supervisorAt, switchNodeId } from './supervisor.js';
import { isNodeId } from './identity-file.js';
import type { HelperInput } from './launch.js';

function log(message: string): void {
  process.stdout.write(
    `[${new Date().toISOString()}] transport-identity helper ${process.pid}: ${message}\n`,
  );
}

function parse(text: string | undefined): HelperInput {
  const value = JSON.parse(text ?? '') as Partial<HelperInput>;
  if (
    !isNodeId(value.from) ||
    !isNodeId(value.to) ||
    typeof value.operationId !== 'string' ||
    value.locator?.kind !== 'lab' ||
    typeof value.locator.socket !== 'string'
  ) {
    throw new Error(
      'usage: switch-helper.js \'{"from","to","operationId","locator":{"kind":"lab","socket"}}\'',
    );
  }
  return value as HelperInput;
}

try {
  const input = parse(process.argv[2]);
  log(
    `operation ${input.operationId}: --node-id ${input.from} -> ${input.to} through the ${input.locator.kind} supervisor`,
  );
  const outcome = await switchNodeId(supervisorAt(input.locator), input);
  log(`operation ${input.operationId}: ${JSON.stringify(outcome)}`);
  process.exitCode = outcome.switched ? 0 : outcome.rolledBack ? 6 : 1;
} catch (error) {
  log(`failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
