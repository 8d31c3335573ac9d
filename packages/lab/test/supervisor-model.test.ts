/**
 * The pure parts of the lab supervisor (contract §13), as tables: which controller it runs when a
 * node's home holds no definition, when a controller counts as accepting requests (its first
 * stdout line names the URL it bound), and which crashes still count against the crash limit.
 */
import { expect } from 'chai';
import { CONTROLLER_NODE_OPTIONS } from '@fleet/core';
import { devCheckoutLaunch, readyPort, recentCrashes } from '../src/supervisor-model.js';

describe('lab supervisor: without a definition the dev checkout controller runs', () => {
  it('on the node home, node id and fixed port, printing its URL as JSON', () => {
    const launch = devCheckoutLaunch('/lab/bin/fleet', '/lab/nodes/node-01/home', {
      nodeId: 'node-01',
      port: 4101,
    });
    expect(launch).to.deep.equal({
      executable: process.execPath,
      args: [
        ...CONTROLLER_NODE_OPTIONS,
        '/lab/bin/fleet',
        'controller',
        'serve',
        '--home',
        '/lab/nodes/node-01/home',
        '--node-id',
        'node-01',
        '--port',
        '4101',
        '--json',
      ],
      environment: {},
      source: 'the dev checkout',
      nodeId: 'node-01',
    });
  });
});

describe('lab supervisor: a controller accepts requests once it printed its bound URL', () => {
  const cases: { line: string; port: number | null }[] = [
    { line: '{"url":"http://127.0.0.1:4101"}', port: 4101 },
    { line: '{"url":"https://127.0.0.1:40000/","nodeId":"n"}', port: 40000 },
    { line: '{"url":"http://127.0.0.1"}', port: null },
    { line: '{"url":"not a url"}', port: null },
    { line: '{}', port: null },
    { line: 'listening on 4101', port: null },
    { line: '', port: null },
  ];
  for (const c of cases) {
    it(`${JSON.stringify(c.line)} → ${c.port ?? 'not yet'}`, () => {
      expect(readyPort(c.line)).to.equal(c.port);
    });
  }
});

describe('lab supervisor: only crashes within the last minute count', () => {
  const now = 1_000_000;
  const cases: { name: string; before: number[]; after: number[] }[] = [
    { name: 'a first crash', before: [], after: [now] },
    { name: 'a crash 59 s ago still counts', before: [now - 59_000], after: [now - 59_000, now] },
    {
      name: 'a crash exactly 60 s ago still counts',
      before: [now - 60_000],
      after: [now - 60_000, now],
    },
    {
      name: 'a crash 61 s ago is forgotten',
      before: [now - 61_000, now - 1_000],
      after: [now - 1_000, now],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(recentCrashes(c.before, now)).to.deep.equal(c.after);
    });
  }
});
