/** The refusals every installer's node half makes first (src/installers/request-guards.ts). */
import { expect } from 'chai';
import { isFleetError } from '../src/errors.js';
import type { InstallFileRequest, NodeInstallRequest } from '../src/interfaces/installer.js';
import {
  oneFileRequest,
  requireDistinctFiles,
  requireDomain,
} from '../src/installers/request-guards.js';

const file = (fileId: string): InstallFileRequest => ({
  fileId,
  path: `~/.config/router/${fileId}.yaml`,
  expectedSha256: null,
  content: 'listen: 8080\n',
});

const request = (domain: string, files: readonly InstallFileRequest[]): NodeInstallRequest => ({
  operationId: '01JB0000000000000000000000',
  domain,
  files,
  parameters: {},
});

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isFleetError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error('expected a refusal');
}

const ROUTER = {
  domain: 'router',
  fileId: 'config',
  name: 'its config file',
  why: 'the volume is derived from it',
};

describe('installer request guards', () => {
  it('passes the one file of a one-file request through', () => {
    const config = file('config');
    expect(oneFileRequest(request('router', [config]), ROUTER)).to.equal(config);
  });

  for (const [name, files] of [
    ['no file', []],
    ['two files', [file('config'), file('config')]],
    ['another file', [file('volume')]],
  ] as const) {
    it(`refuses a one-file request with ${name} (BAD_REQUEST)`, () => {
      expect(refusal(() => oneFileRequest(request('router', files), ROUTER))).to.equal(
        'BAD_REQUEST: router: an install writes exactly its config file (config); the volume is derived from it',
      );
    });
  }

  it('names the one file without a reason when the domain gives none', () => {
    const identity = {
      domain: 'transport-identity',
      fileId: 'identity',
      name: 'the identity file',
    };
    expect(refusal(() => oneFileRequest(request('transport-identity', []), identity))).to.equal(
      'BAD_REQUEST: transport-identity: an install writes exactly the identity file (identity)',
    );
  });

  it('refuses a request for another domain before looking at its files', () => {
    const expected = 'BAD_REQUEST: installer for router was asked to install domain files';
    expect(refusal(() => requireDomain(request('files', []), 'router'))).to.equal(expected);
    expect(refusal(() => oneFileRequest(request('files', [file('config')]), ROUTER))).to.equal(
      expected,
    );
  });

  it('refuses a request naming one file twice, and passes distinct files', () => {
    expect(
      refusal(() => requireDistinctFiles(request('files', [file('a'), file('a')]), 'files')),
    ).to.equal('BAD_REQUEST: files: a file appears twice in one install request');
    expect(() =>
      requireDistinctFiles(request('files', [file('a'), file('b')]), 'files'),
    ).not.to.throw();
  });
});
