import { describe, expect, it } from 'vitest';
import { openApiDocument } from './openapi-document';
import { API_SERVICES, apiService } from './proto-json';
import { REST_ROUTES, pathParameters } from './rest-routes';

type Operation = { operationId: string; 'x-grpc-method': string; parameters?: Array<{ name: string; in: string }>; requestBody?: unknown };

describe('the OpenAPI document', () => {
  const document = openApiDocument('v1') as unknown as { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };
  const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));

  it('is a valid OpenAPI 3.1 document (the specification\'s own JSON Schema)', async () => {
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(JSON.parse(JSON.stringify(document)) as Record<string, unknown>);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('has one operation per route, covering every gRPC method of the four services', () => {
    const grpcMethods = API_SERVICES.flatMap((service) => apiService(service).methods.map((m) => `trellis.v1.${service}/${m.name}`));
    console.log(`OpenAPI operations: ${operations.length}; gRPC methods: ${grpcMethods.length}, all covered: ${grpcMethods.every((m) => operations.some((o) => o.op['x-grpc-method'] === m))}`);
    expect(operations).toHaveLength(REST_ROUTES.length);
    expect(new Set(operations.map((o) => o.op['x-grpc-method']))).toEqual(new Set(grpcMethods));
    expect(new Set(operations.map((o) => o.op.operationId)).size).toBe(operations.length);
  });

  it('declares every path parameter, and only GET and DELETE take query parameters', () => {
    for (const { path, method, op } of operations) {
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      expect(declared, `${method} ${path}`).toEqual(pathParameters(path));
      if (method !== 'get' && method !== 'delete') expect((op.parameters ?? []).some((p) => p.in === 'query'), `${method} ${path}`).toBe(false);
    }
  });

  it('resolves every $ref to a component schema, with the message fields by their JSON names', () => {
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)].map((m) => m[1]!);
    for (const ref of refs) expect(document.components.schemas[ref], ref).toBeDefined();
    expect(document.components.schemas['Document']).toMatchObject({ properties: { sourceUri: { type: 'string' }, sizeBytes: { type: 'string', format: 'uint64' }, status: { $ref: '#/components/schemas/IndexStatus' } } });
    expect(document.components.schemas['IndexStatus']).toMatchObject({ type: 'string', enum: expect.arrayContaining(['INDEX_STATUS_GRAPHED']) });
  });
});
