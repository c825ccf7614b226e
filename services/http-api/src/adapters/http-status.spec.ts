import { Metadata, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { RETRY_AFTER_HEADER } from '@trellis/grpc-edge';
import { fromGrpcError } from './http-status';

const grpcError = (code: status, details: string, metadata = new Metadata()) => Object.assign(new Error(details), { code, details, metadata });

describe('gRPC status → HTTP status', () => {
  it('maps each status once and keeps the gRPC message', () => {
    const table: Array<[status, number]> = [
      [status.INVALID_ARGUMENT, 400],
      [status.UNAUTHENTICATED, 401],
      [status.PERMISSION_DENIED, 403],
      [status.NOT_FOUND, 404],
      [status.ALREADY_EXISTS, 409],
      [status.FAILED_PRECONDITION, 409],
      [status.RESOURCE_EXHAUSTED, 429],
      [status.UNAVAILABLE, 503],
      [status.DEADLINE_EXCEEDED, 504],
      [status.INTERNAL, 500],
      [status.UNKNOWN, 500],
    ];
    for (const [code, http] of table) expect(fromGrpcError(grpcError(code, `message ${code}`))).toMatchObject({ status: http, detail: `message ${code}`, grpcStatus: status[code] });
  });

  it('turns the retry-after-ms trailer of a shed call into Retry-After seconds, rounded up', () => {
    const metadata = new Metadata();
    metadata.set(RETRY_AFTER_HEADER, '1200');
    expect(fromGrpcError(grpcError(status.RESOURCE_EXHAUSTED, 'server overloaded', metadata))).toMatchObject({ status: 429, retryAfterSeconds: 2 });
  });

  it('answers anything that is not a gRPC status as a 500 without its message', () => {
    expect(fromGrpcError(new TypeError('secret internals'))).toEqual(expect.objectContaining({ status: 500, detail: 'internal error' }));
  });
});
