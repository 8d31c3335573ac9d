/** `--tls-cert/--tls-key`: the same API over https. */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { SYSTEM_TOOLS, requireSystemTools } from '@fleet/testkit';
import { startNode, type TestNode } from './support/node.js';

describe('https', () => {
  let node: TestNode;
  let dir: string;
  before(async function () {
    requireSystemTools(
      this,
      [SYSTEM_TOOLS.openssl],
      'makes a self-signed certificate with openssl',
    );
    dir = await mkdtemp(join(tmpdir(), 'fleet-tls-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-days',
          '1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
          '-subj',
          '/CN=127.0.0.1',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
    } catch (error) {
      throw new Error(`openssl could not make a test certificate: ${String(error)}`);
    }
    node = await startNode({
      tls: {
        cert: await readFile(join(dir, 'cert.pem')),
        key: await readFile(join(dir, 'key.pem')),
      },
    });
  });
  after(async () => {
    await node?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves identity over https', async () => {
    expect(node.url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
    const token = await node.issue(['config:read']);
    const ca = await readFile(join(dir, 'cert.pem'));
    const target = new URL(`${node.url}/v1/identity`);
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          ca,
          headers: { authorization: `Bearer ${token}` },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect((JSON.parse(body) as { nodeId: string }).nodeId).to.equal('node-01');
  });
});
