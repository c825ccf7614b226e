import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The proto files, found from this file both in the source tree and in a build. */
export function protoDirectory(): string {
  for (const candidate of [resolve(__dirname, '../../../proto'), resolve(__dirname, '../../proto'), resolve(process.cwd(), 'proto')]) {
    if (existsSync(join(candidate, 'trellis/v1/common.proto'))) return candidate;
  }
  throw new Error('cannot find the proto/ directory');
}

/** How both ends load the protos: camelCase fields, enums as names, defaults and oneofs filled in. */
export const GRPC_LOADER_OPTIONS = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

/** Largest single gRPC message: uploads stream in smaller pieces. */
export const MAX_GRPC_MESSAGE_BYTES = 16 * 1024 * 1024;

/** Call metadata naming who makes a graph edit (recorded in the edit log). */
export const ACTOR_HEADER = 'x-trellis-actor';

/** Trailing metadata of a shed call: how long to wait before sending it again, in ms. */
export const RETRY_AFTER_HEADER = 'retry-after-ms';
