import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Server } from '@grpc/grpc-js';
import { Transport } from '@nestjs/microservices';
import type { GrpcOptions } from '@nestjs/microservices';
import { HealthImplementation } from 'grpc-health-check';
import type { TrellisConfig } from '@trellis/config';
import { grpcReflection } from './grpc-reflection';
import { guardRequestDecoding } from './malformed-request';

/** The proto files, found from this file both in the source tree and in a build. */
export function protoDirectory(): string {
  for (const candidate of [resolve(__dirname, '../../../proto'), resolve(__dirname, '../../proto'), resolve(process.cwd(), 'proto')]) {
    if (existsSync(join(candidate, 'trellis/v1/common.proto'))) return candidate;
  }
  throw new Error('cannot find the proto/ directory');
}

export const GRPC_LOADER_OPTIONS = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

/** The services a process serves; each file under proto/trellis/v1. */
export type TrellisGrpcService = 'knowledge_base' | 'graph' | 'retrieval' | 'chat';

/** Largest single gRPC message: uploads stream in smaller pieces. */
export const MAX_GRPC_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * Nest gRPC transport options for the given services, with the standard health service
 * (overall and per service SERVING) and server reflection so grpcurl works without protos.
 */
export function grpcServerOptions(config: TrellisConfig, services: readonly TrellisGrpcService[], health: HealthImplementation): GrpcOptions {
  const protoDir = protoDirectory();
  return {
    transport: Transport.GRPC,
    options: {
      package: 'trellis.v1',
      protoPath: services.map((s) => join(protoDir, 'trellis/v1', `${s}.proto`)),
      url: `${config.grpcHost}:${config.grpcPort}`,
      loader: { ...GRPC_LOADER_OPTIONS, includeDirs: [protoDir] },
      maxReceiveMessageLength: MAX_GRPC_MESSAGE_BYTES,
      maxSendMessageLength: MAX_GRPC_MESSAGE_BYTES,
      onLoadPackageDefinition: (definition: object, server: Pick<Server, 'addService'>) => {
        guardRequestDecoding(definition);
        grpcReflection(services.map((s) => `trellis/v1/${s}.proto`)).addToServer(server as Server);
        health.addToServer(server as Server);
      },
    },
  };
}

export function createHealth(): HealthImplementation {
  return new HealthImplementation({ '': 'NOT_SERVING' });
}
