import type { RouteSpec } from '@fleet/core/node';
import type { ControllerRuntime } from '../runtime.js';
import type { Principal } from '../tokens/auth.js';

export interface RequestContext {
  readonly runtime: ControllerRuntime;
  readonly principal: Principal;
  readonly route: RouteSpec;
  readonly params: { readonly operationId?: string };
  /** The body, already validated against the route's request schema. */
  readonly body: unknown;
}

export interface HandlerResult {
  readonly status: number;
  readonly body: unknown;
  /**
   * Words the pipeline adds to the route's audit record's detail (a stage's signer, ADR 0019):
   * never a secret, never a token.
   */
  readonly auditDetail?: string;
  /** The handler wrote the audit record itself (success or failure). */
  readonly audited?: boolean;
  /**
   * Runs once the answer has been handed to the connection (or the client went away): a coupled
   * action that replaces this controller (a restart) starts here, never before the answer.
   */
  readonly afterResponse?: () => void | Promise<void>;
  /**
   * Undoes what the handler did when its audit record (route `audit: 'always'`) cannot be
   * written: an operation that is not audited is not done (contract §15).
   */
  readonly undo?: () => Promise<void>;
}

export type Handler = (ctx: RequestContext) => Promise<HandlerResult>;
