import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { ReflectionService } from '@grpc/reflection';
import { FILE_DESCRIPTOR_SET_BASE64 } from '@trellis/contracts';

/** The standard health service every Trellis gRPC server adds beside its own. */
export const HEALTH_SERVICE = 'grpc.health.v1.Health';

/**
 * Server reflection over the descriptors buf compiled from proto/ (and the health proto), listing
 * the given files' services and the health service. The descriptors Nest hands over come from
 * proto-loader, whose map entries are misnamed: grpcurl's `describe` and every call it makes
 * without proto files fail on them ("incorrect implicit map entry name").
 */
export function grpcReflection(protoFiles: readonly string[]): ReflectionService {
  const files = fromBinary(FileDescriptorSetSchema, Buffer.from(FILE_DESCRIPTOR_SET_BASE64, 'base64')).file;
  const services = [HEALTH_SERVICE];
  for (const name of protoFiles) {
    const file = files.find((f) => f.name === name);
    if (!file) throw new Error(`no descriptor for ${name}: run npm run generate`);
    services.push(...file.service.map((s) => `${file.package}.${s.name}`));
  }
  // @grpc/reflection reads the files of any object shaped like a proto-loader definition.
  const definition = { descriptors: { fileDescriptorProtos: files.map((f) => Buffer.from(toBinary(FileDescriptorProtoSchema, f))) } };
  return new ReflectionService(definition as never, { services });
}
