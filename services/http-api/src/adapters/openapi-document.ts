import { ScalarType } from '@bufbuild/protobuf';
import type { DescEnum, DescField, DescMessage } from '@bufbuild/protobuf';
import { MULTIPART_OVERHEAD_BYTES } from './rest-handler';
import { apiMethod } from './proto-json';
import { REST_ROUTES, pathField, pathParameters } from './rest-routes';
import type { RestRoute } from './rest-routes';

type Schema = Record<string, unknown>;

const INT32 = new Set([ScalarType.INT32, ScalarType.SINT32, ScalarType.SFIXED32]);
const UINT32 = new Set([ScalarType.UINT32, ScalarType.FIXED32]);
const INT64 = new Set([ScalarType.INT64, ScalarType.SINT64, ScalarType.SFIXED64]);
const UINT64 = new Set([ScalarType.UINT64, ScalarType.FIXED64]);

/** The JSON Schema of a scalar in the proto3 JSON mapping (64-bit integers are strings). */
function scalarSchema(scalar: ScalarType): Schema {
  if (scalar === ScalarType.STRING) return { type: 'string' };
  if (scalar === ScalarType.BOOL) return { type: 'boolean' };
  if (scalar === ScalarType.BYTES) return { type: 'string', contentEncoding: 'base64' };
  if (scalar === ScalarType.FLOAT) return { type: 'number', format: 'float' };
  if (scalar === ScalarType.DOUBLE) return { type: 'number', format: 'double' };
  if (INT32.has(scalar)) return { type: 'integer', format: 'int32' };
  if (UINT32.has(scalar)) return { type: 'integer', format: 'int32', minimum: 0 };
  if (INT64.has(scalar)) return { type: 'string', format: 'int64', pattern: '^-?[0-9]+$' };
  if (UINT64.has(scalar)) return { type: 'string', format: 'uint64', pattern: '^[0-9]+$' };
  return {};
}

/** Collects the component schemas of messages and enums reachable from the operations. */
class SchemaSet {
  readonly schemas: Record<string, Schema> = {};

  ref(message: DescMessage): Schema {
    if (this.schemas[message.name] === undefined) {
      this.schemas[message.name] = {};
      this.schemas[message.name] = this.object(message.fields);
    }
    return { $ref: `#/components/schemas/${message.name}` };
  }

  /** An object schema of some fields of a message (all of them for a component). */
  object(fields: readonly DescField[]): Schema {
    return { type: 'object', additionalProperties: false, properties: Object.fromEntries(fields.map((f) => [f.jsonName, this.field(f)])) };
  }

  private enumRef(descriptor: DescEnum): Schema {
    this.schemas[descriptor.name] ??= { type: 'string', enum: descriptor.values.map((v) => v.name) };
    return { $ref: `#/components/schemas/${descriptor.name}` };
  }

  private single(field: { message?: DescMessage; enum?: DescEnum; scalar?: ScalarType }): Schema {
    if (field.message) return this.ref(field.message);
    if (field.enum) return this.enumRef(field.enum);
    return scalarSchema(field.scalar!);
  }

  field(field: DescField): Schema {
    switch (field.fieldKind) {
      case 'scalar':
        return scalarSchema(field.scalar);
      case 'enum':
        return this.enumRef(field.enum);
      case 'message':
        return this.ref(field.message);
      case 'list':
        return { type: 'array', items: this.single(field) };
      case 'map':
        return { type: 'object', additionalProperties: this.single(field) };
    }
  }
}

const PROBLEM = { $ref: '#/components/schemas/Problem' };
const PROBLEM_SCHEMA: Schema = {
  type: 'object',
  description: 'RFC 9457 problem details. `detail` is the message of the gRPC status the call ended with.',
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    grpcStatus: { type: 'string', description: 'The gRPC status code name, when the error came from a gRPC call.' },
    field: { type: 'string', description: 'The JSON name of the request field at fault, when one is.' },
  },
};

function operation(route: RestRoute, schemas: SchemaSet): Schema {
  const method = apiMethod(route.service, route.rpc);
  const fromPath = new Set(pathParameters(route.path).map((p) => pathField(route, p)));
  const rest = method.input.fields.filter((f) => !fromPath.has(f.jsonName));
  const parameters: Schema[] = pathParameters(route.path).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  let requestBody: Schema | undefined;
  if (route.kind === 'upload') {
    const metadata = method.input.fields.find((f) => f.name === 'metadata')!.message!;
    requestBody = {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['file'],
            properties: {
              file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'The document; at most TRELLIS_MAX_UPLOAD_BYTES (Content-Length may exceed it by the form framing, ' + `${MULTIPART_OVERHEAD_BYTES} bytes).` },
              metadata: { ...schemas.object(metadata.fields.filter((f) => f.name !== 'knowledge_base')), description: 'UploadMetadata as JSON text.' },
            },
          },
        },
      },
    };
  } else if (route.kind !== 'document-events' && route.kind !== 'knowledge-base-events') {
    if (route.method === 'GET' || route.method === 'DELETE') {
      for (const field of rest) parameters.push({ name: field.jsonName, in: 'query', required: false, schema: schemas.field(field) });
    } else {
      requestBody = { required: false, content: { 'application/json': { schema: schemas.object(rest) } } };
    }
  }
  const output = schemas.ref(method.output);
  const sse = route.kind !== 'unary' && route.kind !== 'upload';
  const eventSchema = route.kind === 'knowledge-base-events' ? schemas.ref(apiMethod('KnowledgeBaseService', 'GetDocument').output) : output;
  return {
    operationId: route.kind !== 'document-events' && route.kind !== 'knowledge-base-events' ? route.rpc.charAt(0).toLowerCase() + route.rpc.slice(1) : `${route.kind.replace(/-(\w)/g, (_, c: string) => c.toUpperCase())}`,
    summary: route.summary,
    tags: [route.service],
    'x-grpc-method': `trellis.v1.${route.service}/${route.rpc}`,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: {
      [String(route.successStatus ?? 200)]: {
        description: sse ? 'Server-sent events; the data of each is JSON of the `x-event-data` schema (`error` events: Problem).' : 'OK',
        content: sse ? { 'text/event-stream': { schema: { type: 'string' }, 'x-event-data': eventSchema } } : { 'application/json': { schema: output } },
      },
      default: { description: 'The error, with the HTTP status its gRPC status maps to.', content: { 'application/problem+json': { schema: PROBLEM } } },
    },
  };
}

/** The parts of the document the docs page reads; the rest is plain JSON. */
export interface OpenApiDocument {
  readonly openapi: string;
  readonly info: { readonly title: string; readonly version: string; readonly description: string };
  readonly paths: Record<string, Record<string, Schema>>;
  readonly [key: string]: unknown;
}

/**
 * The OpenAPI 3.1 document of the REST API, built from the route table the router uses and
 * the protobuf descriptors of each route's request and response message.
 */
export function openApiDocument(version: string): OpenApiDocument {
  const schemas = new SchemaSet();
  const paths: Record<string, Record<string, Schema>> = {};
  for (const route of REST_ROUTES) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, schemas);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Trellis REST API',
      version,
      description: 'Every operation of the Trellis gRPC services over HTTP, JSON in the proto3 JSON mapping. Send `Authorization: Bearer <API key>` when the server has API keys.',
    },
    servers: [{ url: '/' }],
    components: { schemas: { ...schemas.schemas, Problem: PROBLEM_SCHEMA }, securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } } },
    security: [{ apiKey: [] }, {}],
    paths,
  };
}
