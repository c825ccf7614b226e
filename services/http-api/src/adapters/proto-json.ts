import { ScalarType, create, createFileRegistry, fromBinary, fromJson, protoInt64, toJson } from '@bufbuild/protobuf';
import type { DescEnum, DescField, DescMessage, DescMethod, DescService, JsonValue } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { FILE_DESCRIPTOR_SET_BASE64 } from '@trellis/contracts';

/**
 * The proto3 JSON mapping of the gRPC API, driven by the descriptors buf compiled from proto/
 * (FILE_DESCRIPTOR_SET_BASE64) and @bufbuild/protobuf's generated-code-free reflection: no
 * message is mapped by hand. The gRPC client speaks proto-loader objects (camelCase fields,
 * enum names, numbers for 64-bit integers, a virtual field naming each oneof's case); the two
 * converters below translate between those and protobuf-es messages, field by descriptor field.
 */
export const protoRegistry = createFileRegistry(fromBinary(FileDescriptorSetSchema, Buffer.from(FILE_DESCRIPTOR_SET_BASE64, 'base64')));

/** The four public services, in the order the API documents them. */
export const API_SERVICES = ['KnowledgeBaseService', 'GraphService', 'RetrievalService', 'ChatService'] as const;
export type ApiServiceName = (typeof API_SERVICES)[number];

export function apiService(name: ApiServiceName): DescService {
  const service = protoRegistry.getService(`trellis.v1.${name}`);
  if (service === undefined) throw new Error(`no descriptor for trellis.v1.${name}: run npm run generate`);
  return service;
}

export function apiMethod(service: ApiServiceName, name: string): DescMethod {
  const method = apiService(service).methods.find((m) => m.name === name);
  if (method === undefined) throw new Error(`trellis.v1.${service} has no method ${name}`);
  return method;
}

/** A JSON body that does not fit the request message; `field` is its JSON name when one is to blame. */
export class JsonBodyError extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** A proto3 JSON request, checked against its message, as the object the gRPC client sends. */
export function requestFromJson(schema: DescMessage, json: JsonValue): Record<string, unknown> {
  try {
    return toGrpcObject(schema, fromJson(schema, json) as unknown as Record<string, unknown>);
  } catch (error) {
    const message = (error as Error).message;
    throw new JsonBodyError(message.replace(/^\[[a-z_]+\] /, ''), blamedField(schema, message));
  }
}

/** A gRPC response object as proto3 JSON; fields at their default value are written too. */
export function responseToJson(schema: DescMessage, grpcObject: unknown): JsonValue {
  return toJson(schema, create(schema, fromGrpcObject(schema, grpcObject as Record<string, unknown>) as never), { alwaysEmitImplicit: true });
}

/**
 * The field a decoding error blames, as a JSON path from the request (`chunking.chunkSizeTokens`).
 * protobuf-es names the message type and proto field (`cannot decode field
 * trellis.v1.ChunkingSettings.chunk_size_tokens from JSON`) or an unknown key (`key "x" is unknown`).
 */
function blamedField(schema: DescMessage, message: string): string | undefined {
  const decoded = /field ([\w.]+) from JSON/.exec(message)?.[1];
  const ownerName = decoded?.slice(0, decoded.lastIndexOf('.')) ?? /message ([\w.]+) from JSON/.exec(message)?.[1];
  const owner = ownerName === undefined ? undefined : protoRegistry.getMessage(ownerName);
  const leaf = decoded !== undefined ? owner?.fields.find((f) => f.name === decoded.slice(decoded.lastIndexOf('.') + 1))?.jsonName : /key "([^"]+)" is unknown/.exec(message)?.[1];
  if (leaf === undefined) return undefined;
  const prefix = owner === undefined ? [] : (pathTo(schema, owner.typeName) ?? []);
  return [...prefix, leaf].join('.');
}

/** The JSON names leading from a message to the first field of the given message type (breadth first). */
function pathTo(from: DescMessage, typeName: string): string[] | undefined {
  const queue: Array<{ message: DescMessage; path: string[] }> = [{ message: from, path: [] }];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const { message, path } = queue.shift()!;
    if (message.typeName === typeName) return path;
    if (seen.has(message.typeName)) continue;
    seen.add(message.typeName);
    for (const field of message.fields) {
      const nested = fieldKind(field).message;
      if (nested !== undefined) queue.push({ message: nested, path: [...path, field.jsonName] });
    }
  }
  return undefined;
}

const INT64_TYPES = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);

type Kind = { scalar?: ScalarType; enum?: DescEnum; message?: DescMessage };

function fieldKind(field: DescField): Kind {
  switch (field.fieldKind) {
    case 'scalar':
      return { scalar: field.scalar };
    case 'enum':
      return { enum: field.enum };
    case 'message':
      return { message: field.message };
    case 'list':
      return field.listKind === 'scalar' ? { scalar: field.scalar } : field.listKind === 'enum' ? { enum: field.enum } : { message: field.message };
    case 'map':
      return field.mapKind === 'scalar' ? { scalar: field.scalar } : field.mapKind === 'enum' ? { enum: field.enum } : { message: field.message };
  }
}

function mapField(field: DescField, value: unknown, one: (kind: Kind, v: unknown) => unknown): unknown {
  const kind = fieldKind(field);
  if (field.fieldKind === 'list') return (value as unknown[]).map((v) => one(kind, v));
  if (field.fieldKind === 'map') return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, one(kind, v)]));
  return one(kind, value);
}

function toGrpcValue(kind: Kind, value: unknown): unknown {
  if (kind.message) return toGrpcObject(kind.message, value as Record<string, unknown>);
  if (kind.enum) return kind.enum.values.find((v) => v.number === value)?.name ?? value;
  return typeof value === 'bigint' ? Number(value) : value;
}

function toGrpcObject(schema: DescMessage, message: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const member of schema.members) {
    if (member.kind === 'oneof') {
      const selected = message[member.localName] as { case?: string; value?: unknown } | undefined;
      const field = member.fields.find((f) => f.localName === selected?.case);
      if (field !== undefined) out[field.localName] = mapField(field, selected!.value, toGrpcValue);
      continue;
    }
    const value = message[member.localName];
    if (value !== undefined) out[member.localName] = mapField(member, value, toGrpcValue);
  }
  return out;
}

function fromGrpcValue(kind: Kind, value: unknown): unknown {
  if (kind.message) return fromGrpcObject(kind.message, value as Record<string, unknown>);
  if (kind.enum) return typeof value === 'string' ? (kind.enum.values.find((v) => v.name === value)?.number ?? 0) : value;
  if (kind.scalar !== undefined && INT64_TYPES.has(kind.scalar)) return protoInt64.parse(String(value));
  return value;
}

function fromGrpcObject(schema: DescMessage, object: Record<string, unknown>): Record<string, unknown> {
  const init: Record<string, unknown> = {};
  for (const member of schema.members) {
    if (member.kind === 'oneof') {
      const field = member.fields.find((f) => f.localName === object[member.localName]) ?? member.fields.find((f) => object[f.localName] != null);
      if (field !== undefined && object[field.localName] != null) {
        init[member.localName] = { case: field.localName, value: mapField(field, object[field.localName], fromGrpcValue) };
      }
      continue;
    }
    const value = object[member.localName];
    if (value != null) init[member.localName] = mapField(member, value, fromGrpcValue);
  }
  return init;
}
