/**
 * A real controller on 127.0.0.1 (ephemeral port) over a temp home, with a canary secret in its
 * env chain and a node policy (by default serving every domain of its registry at the declared
 * paths; `policy` replaces it, `policy: null` starts without one), and a small raw-HTTP client
 * that checks every answer against the wire schemas and speaks the current protocol.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { ulid } from 'ulid';
import {
  FLEET_PROTOCOL_VERSION,
  NODE_POLICY_VERSION,
  PROTOCOL_HEADER,
  defaultNodePolicy,
  errorBodySchema,
  matchRoute,
  parseHomePath,
  type NodePolicyInput,
  type Registry,
  type Scope,
} from '@fleet/core';
import {
  createController,
  writeNodePolicy,
  type Controller,
  type ControllerOptions,
} from '../../src/index.js';
import { TokenStore } from '../../src/tokens/store.js';
import { statePaths } from '../../src/state-paths.js';
import { systemClock } from '../../src/context.js';
import { fixtureRegistry } from './fixture-registry.js';

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any;
}

export interface CallOptions {
  readonly method?: string;
  readonly token?: string;
  readonly body?: unknown;
  /** Raw body bytes (sent as they are). */
  readonly raw?: string | Buffer;
  readonly headers?: Record<string, string>;
  /** The protocol header to send (default the current version; `null`: none, as protocol 1). */
  readonly protocol?: number | null;
}

/** One HTTP exchange with exact control of the request line and headers. */
export function call(url: string, path: string, options: CallOptions = {}): Promise<Answer> {
  const target = new URL(url);
  const payload =
    options.raw !== undefined
      ? Buffer.from(options.raw)
      : options.body === undefined
        ? undefined
        : Buffer.from(JSON.stringify(options.body));
  const method = options.method ?? (payload === undefined ? 'GET' : 'POST');
  const headers: Record<string, string> = {
    ...(options.protocol === null
      ? {}
      : { [PROTOCOL_HEADER]: String(options.protocol ?? FLEET_PROTOCOL_VERSION) }),
    ...(payload === undefined
      ? {}
      : { 'content-type': 'application/json', 'content-length': String(payload.length) }),
    ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, method, path, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          const answer = { status: res.statusCode ?? 0, headers: res.headers, text, body };
          checkSchema(method, path, answer);
          resolve(answer);
        });
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Every answer must match its route's response schema, or the error envelope. */
function checkSchema(method: string, path: string, answer: Answer): void {
  if (answer.status === 200) {
    const match = matchRoute(method, path);
    if (match.route === null) expect.fail(`200 for an unknown route ${method} ${path}`);
    const parsed = match.route.response.safeParse(answer.body);
    if (!parsed.success)
      expect.fail(`${method} ${path}: answer off-schema: ${parsed.error.message}`);
  } else {
    const parsed = errorBodySchema.safeParse(answer.body);
    if (!parsed.success)
      expect.fail(`${method} ${path} ${answer.status}: not an error envelope: ${answer.text}`);
  }
}

export interface TestNode {
  readonly home: string;
  readonly canary: string;
  readonly store: TokenStore;
  controller: Controller;
  readonly url: string;
  issue(scopes: readonly Scope[], ttlMs?: number): Promise<string>;
  call(path: string, options?: CallOptions): Promise<Answer>;
  abs(path: string): string;
  write(path: string, content: string | Buffer, mode?: number): Promise<void>;
  read(path: string): Promise<Buffer | undefined>;
  restart(options?: Partial<ControllerOptions>): Promise<void>;
  /** Replaces the node policy file (the controller reads it again at its next request). */
  setPolicy(policy: PolicyInput): Promise<void>;
  dispose(): Promise<void>;
}

/** A node policy as tests write it: `version` may be left out. */
export type PolicyInput = Omit<NodePolicyInput, 'version'> & { readonly version?: 1 };

/** Writes `home`'s node policy as its owner would (0600, replacing any). */
export async function writePolicy(home: string, policy: PolicyInput): Promise<void> {
  await writeNodePolicy(home, { version: NODE_POLICY_VERSION, ...policy }, { force: true });
}

export const CANARY_NAME = 'CANARY';

export async function startNode(
  options: Partial<ControllerOptions> & {
    registry?: Registry;
    /** The node policy (default: every registry domain at its paths); `null`: none written. */
    policy?: PolicyInput | null;
  } = {},
): Promise<TestNode> {
  const home = await mkdtemp(join(tmpdir(), 'fleet-controller-'));
  const canary = randomBytes(32).toString('hex');
  await mkdir(join(home, '.config', 'fleet'), { recursive: true, mode: 0o700 });
  await writeFile(
    join(home, '.config', 'fleet', 'env'),
    `${CANARY_NAME}=${canary}\nDB_PASSWORD="p@ss word"\n`,
    { mode: 0o600 },
  );
  const { policy, ...controllerOptions } = options;
  const registry = options.registry ?? (await fixtureRegistry());
  if (policy !== null) {
    await writePolicy(
      home,
      policy ?? defaultNodePolicy(registry.domains().map((entry) => entry.descriptor.domain)),
    );
  }
  const start = (extra: Partial<ControllerOptions> = {}) =>
    createController({
      home,
      nodeId: 'node-01',
      registry,
      validateResponses: true,
      ...controllerOptions,
      ...extra,
    });
  const node: TestNode = {
    home,
    canary,
    store: new TokenStore(statePaths(home), systemClock),
    controller: await start(),
    get url() {
      return node.controller.url;
    },
    async issue(scopes, ttlMs) {
      const issued = await node.store.issue({
        client: 'test',
        scopes,
        ...(ttlMs === undefined ? {} : { ttlMs }),
      });
      return issued.token;
    },
    call: (path, callOptions) => call(node.controller.url, path, callOptions),
    abs: (path) => join(home, ...parseHomePath(path)),
    async write(path, content, mode = 0o600) {
      const absolute = node.abs(path);
      await mkdir(dirname(absolute), { recursive: true, mode: 0o700 });
      await writeFile(absolute, content, { mode });
      await chmod(absolute, mode);
    },
    async read(path) {
      return readFile(node.abs(path)).catch(() => undefined);
    },
    async restart(extra) {
      await node.controller.close();
      node.controller = await start(extra);
    },
    setPolicy: (next) => writePolicy(home, next),
    async dispose() {
      await node.controller.close();
      await rm(home, { recursive: true, force: true });
    },
  };
  return node;
}

export const newId = (): string => ulid();
