/**
 * The envelope `bootstrap apply --recover` sends with its plan (runtime/recover.ts, ADR 0019),
 * pure: the signature rides in it when fleet.yaml pins one, and is absent otherwise, so a
 * receiver that predates it reads the same bundle as before.
 */
import { expect } from 'chai';
import type { BootstrapPlan } from '@fleet/core';
import { recoveryEnvelope } from '../src/runtime/recover.js';

const PLAN = { id: 'plan-1' } as unknown as BootstrapPlan;

describe('bootstrap apply --recover: the plan envelope', () => {
  it('carries the pinned signature, after the plan and the timeout', () => {
    const envelope = recoveryEnvelope(PLAN, 60_000, { signature: 'U1NIU0lH' });
    expect(JSON.stringify(envelope)).to.equal(
      '{"plan":{"id":"plan-1"},"acceptanceTimeoutMs":60000,"signature":"U1NIU0lH"}',
    );
  });

  it('has no signature field for an unsigned pin', () => {
    const envelope = recoveryEnvelope(PLAN, 1000, {});
    expect(envelope).to.not.have.property('signature');
    expect(JSON.stringify(envelope)).to.equal(
      '{"plan":{"id":"plan-1"},"acceptanceTimeoutMs":1000}',
    );
  });
});
