/**
 * A host whose node predates byte-exact sources (issue 38), against a real controller on
 * 127.0.0.1: drift's read of the host asks each byte-exact entry with `bytes: true` (contract
 * §10.4). A node of the release before that field decoded `POST /v1/snapshot` with the same strict
 * schema without `bytes` on a file entry (core wire/snapshot.ts before the field was added), so it
 * refused the whole request as `BAD_REQUEST` naming `files.N: Unrecognized key: "bytes"`. The
 * "older node" here is a real controller behind a gate on 127.0.0.1 that decodes the snapshot body
 * with exactly that older schema and answers a refusal as the old release's pipeline did (status
 * 400, the protocol header, `{ error: { code, message } }` worded as controller/src/http/request.ts
 * words a schema refusal); whatever that schema accepts goes to the controller unchanged. The
 * operator then reports that entry alone as not checkable (`NODE_OUTDATED`) and reads the others.
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import * as z from '@fleet/core/zod';
import {
  FLEET_PROTOCOL_VERSION,
  MAX_SNAPSHOT_PATHS,
  NODE_POLICY_VERSION,
  PROTOCOL_HEADER,
  createControllerClient,
  defaultNodePolicy,
  defineRegistration,
  snapshotFileRequestSchema,
  snapshotRequestSchema,
  wholeFileInstaller,
  type ControllerClient,
  type FileTarget,
  type SnapshotRequest,
} from '@fleet/core';
import {
  TokenStore,
  createController,
  statePaths,
  systemClock,
  writeNodePolicy,
  type Controller,
} from '@fleet/controller';
import { registryFromHooks } from '@fleet/testkit';
import { readSnapshotThroughController } from '../src/config/live.js';

const TEXT = '~/.config/dot/app.conf';
const BIN = '~/.config/dot/logo.bin';
/** A Latin-1 source: not UTF-8, so it is installed and compared byte for byte. */
const LATIN1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]);

const targets: FileTarget[] = [
  {
    domain: 'dot',
    file: { id: 'app.conf', path: TEXT, canonical: 'app.conf', kind: 'whole', format: 'text' },
    path: TEXT,
    canonical: 'domains/dot/app.conf',
    desired: { ok: true, content: 'v1\n' },
  },
  {
    domain: 'dot',
    file: { id: 'logo.bin', path: BIN, canonical: 'logo.bin', kind: 'whole', format: 'text' },
    path: BIN,
    canonical: 'domains/dot/logo.bin',
    desired: { ok: true, content: LATIN1.toString('base64'), encoding: 'base64' },
  },
];

/** The snapshot request schema of the release before `bytes`: the same, without that key. */
function schemaBeforeBytes() {
  const file = snapshotFileRequestSchema.unwrap().omit({ bytes: true });
  return snapshotRequestSchema
    .unwrap()
    .extend({ files: z.array(file).min(1).max(MAX_SNAPSHOT_PATHS) });
}

/** Older still: the release before `mode` too. */
function schemaBeforeModes() {
  const file = snapshotFileRequestSchema.unwrap().omit({ bytes: true, mode: true });
  return snapshotRequestSchema
    .unwrap()
    .extend({ files: z.array(file).min(1).max(MAX_SNAPSHOT_PATHS) });
}

/**
 * A node whose snapshot route decodes with `schema`: a body it refuses is answered as a
 * controller answers a schema refusal (its first three issues); anything else is passed to the
 * real controller at `upstream` and its answer passed back as it came.
 */
async function nodeDecodingWith(upstream: string, schema: z.ZodType): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST' && req.url === '/v1/snapshot') {
        const parsed = schema.safeParse(JSON.parse(body.toString('utf8')));
        if (!parsed.success) {
          const issues = parsed.error.issues
            .slice(0, 3)
            .map((i) => `${i.path.length > 0 ? i.path.join('.') : '(body)'}: ${i.message}`);
          const message = `the request body does not match the schema: ${issues.join('; ')}`;
          const text = JSON.stringify({ error: { code: 'BAD_REQUEST', message } });
          res.writeHead(400, {
            'content-type': 'application/json; charset=utf-8',
            'content-length': Buffer.byteLength(text),
            [PROTOCOL_HEADER]: String(FLEET_PROTOCOL_VERSION),
          });
          res.end(text);
          return;
        }
      }
      const target = new URL(upstream);
      const forward = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: target.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      forward.end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

describe("drift's read of a node that predates byte-exact sources", function () {
  this.timeout(30_000);
  let home: string;
  let controller: Controller;
  let token: string;
  let gate: Server | undefined;
  const sent: SnapshotRequest[] = [];

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-older-node-'));
    await writeNodePolicy(home, { ...defaultNodePolicy(['dot']), version: NODE_POLICY_VERSION });
    await mkdir(join(home, '.config/dot'), { recursive: true });
    await writeFile(join(home, '.config/dot/app.conf'), 'v1\n');
    await writeFile(join(home, '.config/dot/logo.bin'), LATIN1);
    const registry = await registryFromHooks([
      {
        plugin: { name: '@fleet/plugin-dot-fixture', version: '1.0.0', type: 'core' },
        hook: () =>
          defineRegistration({
            installers: [
              {
                domain: 'dot',
                description: 'a text file and a Latin-1 one',
                files: targets.map((target) => target.file),
                hostVariables: [],
                coupling: { kind: 'none' },
                load: () => Promise.resolve(wholeFileInstaller('dot')),
              },
            ],
          }),
      },
    ]);
    controller = await createController({ home, nodeId: 'node-01', registry });
    const store = new TokenStore(statePaths(home), systemClock);
    ({ token } = await store.issue({ client: 'operator', scopes: ['config:read'] }));
    sent.length = 0;
  });
  afterEach(async () => {
    if (gate !== undefined) {
      gate.close();
      await once(gate, 'close');
      gate = undefined;
    }
    await controller.close();
    await rm(home, { recursive: true, force: true });
  });

  /** The operator's client of the node at `url`, counting the snapshot requests it sends. */
  function clientOf(url: string): ControllerClient {
    const real = createControllerClient({ host: 'node-01', url, token });
    return {
      ...real,
      snapshot: (request) => {
        sent.push(request);
        return real.snapshot(request);
      },
    };
  }

  /** An older node: the real controller behind a gate decoding with an older schema. */
  async function olderNode(schema: z.ZodType): Promise<ControllerClient> {
    gate = await nodeDecodingWith(controller.url, schema);
    return clientOf(`http://127.0.0.1:${(gate.address() as AddressInfo).port}`);
  }

  const read = (client: ControllerClient, asked: readonly FileTarget[] = targets) =>
    readSnapshotThroughController({ client: () => client })('node-01', asked, [], {});

  it('a current node answers every entry in one request, the Latin-1 one by its bytes', async () => {
    const { files } = await read(clientOf(controller.url));
    expect(sent).to.have.length(1);
    expect(files.get(BIN)).to.include({ kind: 'present', binary: true, size: LATIN1.length });
    expect(files.get(TEXT)).to.include({ kind: 'present', content: 'v1\n' });
  });

  it('an older node: the byte entry cannot be checked and says why; the text entry is read', async () => {
    const { files } = await read(await olderNode(schemaBeforeBytes()));
    expect(sent.map((request) => request.files.map((file) => file.bytes))).to.deep.equal([
      [undefined, true],
      [undefined, undefined],
    ]);
    expect(files.get(TEXT)).to.include({ kind: 'present', content: 'v1\n' });
    const outdated = files.get(BIN);
    expect(outdated).to.include({ kind: 'refused', code: 'NODE_OUTDATED' });
    expect(outdated)
      .to.have.property('message')
      .that.contains('node runtime predates byte-exact sources')
      .and.contains('upgrade');
  });

  it('a node older still (before modes too): its refusal names `mode` as well and stands, asked once', async () => {
    const client = await olderNode(schemaBeforeModes());
    const withMode = targets.map((target) => ({
      ...target,
      file: { ...target.file, mode: '0644' },
    }));
    const refused = await read(client, withMode).then(
      () => null,
      (error: unknown) => error as Error,
    );
    expect(refused?.message).to.match(/Unrecognized keys: "mode", "bytes"|"bytes", "mode"/);
    expect(sent).to.have.length(1);
  });
});
