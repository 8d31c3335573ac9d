/**
 * The lab supervisor's definition file (contract §12–§13): `~/.config/fleet/lab-controller.json` in a
 * lab node's home, `{ "schema": "fleet.lab-controller/v1", "command": [argv…], "environment": {…} }`
 * (the schema is core's, next to the supervisor's control protocol). The lab bootstrap adapter
 * writes it for a runtime generation; the supervisor reads it at every (re)start and spawns
 * `command` instead of the dev checkout's `fleet controller serve`.
 *
 * Everything here is pure: generating a definition, reading one back, and the checks the supervisor
 * applies before it runs one — a lab host's port is fixed and its home is the lab's, so a
 * definition that says otherwise is refused, never guessed around.
 */
import { resolve } from 'node:path';
import {
  FleetError,
  argvFlag,
  describeRuntimeCommand,
  formatProblem,
  parseStrictJson,
  zodProblems,
  type DefinitionFacts,
  type SupervisorDefinition,
  type SupervisorDefinitionInput,
} from '@fleet/core';
import {
  LAB_CONTROLLER_DEFINITION_PATH,
  LAB_CONTROLLER_DEFINITION_SCHEMA,
  LAB_SUPERVISOR_ENV,
  labControllerDefinitionSchema,
  type LabControllerDefinition,
} from './supervisor-protocol.js';

export { LAB_CONTROLLER_DEFINITION_PATH };

const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A node id as `--node-id` takes it. */
export function isNodeId(value: string): boolean {
  return NODE_ID.test(value);
}

/** The file for a parsed definition (canonical form: two-space JSON, one trailing newline). */
export function renderLabControllerDefinition(
  definition: LabControllerDefinition,
): SupervisorDefinition {
  const document: LabControllerDefinition = {
    schema: LAB_CONTROLLER_DEFINITION_SCHEMA,
    command: [...definition.command],
    environment: { ...definition.environment },
  };
  return {
    path: LAB_CONTROLLER_DEFINITION_PATH,
    content: `${JSON.stringify(document, null, 2)}\n`,
    encoding: 'utf8',
  };
}

/** Parses and validates a definition's text; `ACTION_FAILED` naming the file when it is not one. */
export function parseLabControllerDefinition(
  content: string,
  source = LAB_CONTROLLER_DEFINITION_PATH,
): LabControllerDefinition {
  const value = parseStrictJson(content, source, 'ACTION_FAILED');
  const parsed = labControllerDefinitionSchema.safeParse(value);
  if (!parsed.success) {
    const problems = zodProblems(parsed.error, undefined).slice(0, 3).map(formatProblem);
    throw new FleetError(
      'ACTION_FAILED',
      `${source} is not a lab controller definition (${LAB_CONTROLLER_DEFINITION_SCHEMA}): ${problems.join('; ')}`,
    );
  }
  return parsed.data;
}

/** The lab definition for a generation (pure): `SupervisorDefinitionInput` as JSON. */
export function labControllerDefinition(input: SupervisorDefinitionInput): SupervisorDefinition {
  const refuse = (message: string) => new FleetError('USAGE', `lab definition: ${message}`);
  if (!NODE_ID.test(input.nodeId))
    throw refuse(`node id ${JSON.stringify(input.nodeId)} is not a node id`);
  if (!input.home.startsWith('/')) throw refuse('the home must be an absolute path');
  if (input.environment && Object.hasOwn(input.environment, LAB_SUPERVISOR_ENV))
    throw refuse(`${LAB_SUPERVISOR_ENV} is the supervisor's to set, not the definition's`);
  const candidate = {
    schema: LAB_CONTROLLER_DEFINITION_SCHEMA,
    command: [...input.command],
    environment: { ...input.environment },
  };
  const parsed = labControllerDefinitionSchema.safeParse(candidate);
  if (!parsed.success) {
    throw refuse(zodProblems(parsed.error, undefined).slice(0, 3).map(formatProblem).join('; '));
  }
  return renderLabControllerDefinition(parsed.data);
}

/** What a definition says (pure): argv, the generation it runs, its `--node-id`, environment. */
export function readLabControllerDefinition(content: string): DefinitionFacts {
  const definition = parseLabControllerDefinition(content);
  const facts = describeRuntimeCommand(definition.command);
  return {
    command: definition.command,
    generation: facts.buildId,
    nodeIdFlag: facts.nodeId,
    environment: definition.environment,
  };
}

/** `argv` with `--json` appended when it has none (the supervisor reads readiness from it). */
export function withJsonFlag(argv: readonly string[]): string[] {
  return argv.includes('--json') ? [...argv] : [...argv, '--json'];
}

function hasSequence(argv: readonly string[], sequence: readonly string[]): boolean {
  for (let i = 0; i + sequence.length <= argv.length; i += 1) {
    if (sequence.every((part, j) => argv[i + j] === part)) return true;
  }
  return false;
}

/**
 * Why the supervisor of the lab node whose home is `home` and whose fixed port is `port` must not
 * run `definition`, or `null` when it may: the command runs `controller serve` (readiness, and
 * `lab down` recognises its controllers by it) with that `--home`, that `--port` and a valid
 * `--node-id`, and the environment leaves the supervisor's socket variable alone.
 */
export function labDefinitionProblem(
  definition: LabControllerDefinition,
  expected: { readonly home: string; readonly port: number },
): string | null {
  const argv = definition.command;
  if (!hasSequence(argv, ['controller', 'serve']))
    return 'the command does not run `controller serve`';
  const home = argvFlag(argv, '--home');
  if (home === null || resolve(home) !== resolve(expected.home))
    return `the command's --home is ${home === null ? 'missing' : JSON.stringify(home)}, but this lab node's home is ${JSON.stringify(expected.home)}`;
  const port = argvFlag(argv, '--port');
  if (port === null || port !== String(expected.port))
    return `the command's --port is ${port === null ? 'missing' : JSON.stringify(port)}, but this lab host's port is fixed at ${expected.port}`;
  const nodeId = argvFlag(argv, '--node-id');
  if (nodeId === null || !NODE_ID.test(nodeId))
    return `the command's --node-id is ${nodeId === null ? 'missing' : `${JSON.stringify(nodeId)}, not a node id`}`;
  if (Object.hasOwn(definition.environment, LAB_SUPERVISOR_ENV))
    return `the environment sets ${LAB_SUPERVISOR_ENV}, which is the supervisor's to set`;
  return null;
}
