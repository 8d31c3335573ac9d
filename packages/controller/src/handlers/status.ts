/**
 * `GET /v1/operations/<id>`: what happened to an operation — for a client that lost its
 * connection mid-install and must not blindly retry. Answers from this process's in-flight set,
 * then the stored record (which startup recovery writes for an interrupted operation).
 */
import { FleetError, type OperationStatusResponse } from '@fleet/core/node';
import type { Handler } from './types.js';

export const operationStatus: Handler = async ({ runtime, params }) => {
  const id = params.operationId as string;
  const running = runtime.operations.inflight.get(id);
  if (running) {
    const body: OperationStatusResponse = {
      operationId: id,
      operation: running.operation,
      state: 'in-progress',
      startedAt: running.startedAt,
      finishedAt: null,
    };
    return { status: 200, body };
  }
  const record = await runtime.operations.get(id);
  if (!record) throw new FleetError('OPERATION_NOT_FOUND', `no operation ${id} on this node`);
  const { requestSha256: _sha, client: _client, httpStatus: _status, ...status } = record;
  return { status: 200, body: status satisfies OperationStatusResponse };
};
