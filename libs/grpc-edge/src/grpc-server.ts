import { join } from 'node:path';
import type { Server } from '@grpc/grpc-js';
import { Transport } from '@nestjs/microservices';
import type { GrpcOptions } from '@nestjs/microservices';
import { HealthImplementation } from 'grpc-health-check';
import type { TrellisConfig } from '@trellis/config';
import { GRPC_LOADER_OPTIONS, MAX_GRPC_MESSAGE_BYTES, protoDirectory } from '@trellis/wire';
import { grpcReflection } from './grpc-reflection';
import { guardRequestDecoding } from './malformed-request';

/** The services a process serves; each file under proto/trellis/v1. */
export type TrellisGrpcService = 'knowledge_base' | 'graph' | 'retrieval' | 'chat';

/**
 * Nest gRPC transport options for the given services, with the standard health service
 * (overall and per service SERVING) and server reflection so grpcurl works without protos.
 * Listens on `url` when given (the standalone core behind its front thread), else on the
 * configured host and port.
 */
export function grpcServerOptions(config: TrellisConfig, services: readonly TrellisGrpcService[], health: HealthImplementation, url?: string): GrpcOptions {
  const protoDir = protoDirectory();
  return {
    transport: Transport.GRPC,
    options: {
      package: 'trellis.v1',
      protoPath: services.map((s) => join(protoDir, 'trellis/v1', `${s}.proto`)),
      url: url ?? `${config.grpcHost}:${config.grpcPort}`,
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
