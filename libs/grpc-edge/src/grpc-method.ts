import type { ExecutionContext } from '@nestjs/common';

/** Nest's metadata key of a `@GrpcMethod`'s pattern (`{ service, rpc, streaming }`). */
const PATTERN_METADATA = 'microservices:pattern';

interface GrpcPattern {
  readonly service?: string;
  readonly rpc?: string;
}

/** The gRPC service and method a Nest handler serves, spelled as in the proto (`RetrievalService`, `RetrieveChunks`). */
export function grpcMethodOf(context: ExecutionContext): { service: string; method: string } {
  const pattern = ([] as GrpcPattern[]).concat((Reflect.getMetadata(PATTERN_METADATA, context.getHandler()) as GrpcPattern | GrpcPattern[] | undefined) ?? [])[0];
  // ts-proto registers methods by their camelCase handler name; the proto spells them in PascalCase.
  const method = pascalCase(pattern?.rpc ?? context.getHandler().name);
  return { service: pattern?.service ?? context.getClass().name, method };
}

function pascalCase(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
