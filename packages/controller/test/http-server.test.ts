/**
 * What the server answers to a request Node's HTTP parser rejects, before the pipeline sees it
 * (http/server.ts): by the parser's error code, one stable code and status each.
 */
import { expect } from 'chai';
import { clientErrorAnswer } from '../src/http/server.js';

describe('clientErrorAnswer', () => {
  const cases: [errorCode: string | undefined, code: string, status: string, message: string][] = [
    [
      'ERR_HTTP_REQUEST_TIMEOUT',
      'REQUEST_TIMEOUT',
      '408 Request Timeout',
      'the request took too long',
    ],
    ['HPE_HEADER_OVERFLOW', 'REQUEST_TOO_LARGE', '413 Payload Too Large', 'malformed HTTP request'],
    ['HPE_INVALID_METHOD', 'BAD_REQUEST', '400 Bad Request', 'malformed HTTP request'],
    [undefined, 'BAD_REQUEST', '400 Bad Request', 'malformed HTTP request'],
  ];
  for (const [errorCode, code, status, message] of cases) {
    it(`${errorCode ?? 'no error code'}: ${status}`, () => {
      expect(clientErrorAnswer(errorCode)).to.deep.equal({ code, status, message });
    });
  }
});
