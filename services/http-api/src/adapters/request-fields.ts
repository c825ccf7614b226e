import type { IncomingMessage } from 'node:http';
import { ScalarType } from '@bufbuild/protobuf';
import type { DescMessage, JsonValue } from '@bufbuild/protobuf';
import { httpError } from './http-status';
import { HttpFailure, readJsonBody } from './request-body';
import { pathField, pathParameters } from './rest-routes';
import type { RestRoute } from './rest-routes';

/**
 * A route's request as proto3 JSON: path parameters, plus the query string (GET, DELETE) or
 * the JSON body (POST, PATCH). The message's own JSON mapping checks the result afterwards.
 */
export async function requestJson(req: IncomingMessage, route: RestRoute, params: Record<string, string>, query: URLSearchParams, schema: DescMessage): Promise<JsonValue> {
  const fields = route.method === 'GET' || route.method === 'DELETE' ? queryJson(query, schema) : await readJsonBody(req);
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new HttpFailure(httpError(400, 'the body must be a JSON object'));
  const json = { ...(fields as Record<string, JsonValue>) };
  for (const parameter of pathParameters(route.path)) {
    const field = pathField(route, parameter);
    const given = json[field];
    if (given !== undefined && given !== params[parameter]) {
      throw new HttpFailure(httpError(400, `${field} is taken from the path ("${params[parameter]}"); the body says "${String(given)}"`, { field }));
    }
    json[field] = params[parameter]!;
  }
  return json;
}

/** Query parameters named by a scalar or repeated scalar field (JSON or proto name), as JSON. */
export function queryJson(query: URLSearchParams, schema: DescMessage): Record<string, JsonValue> {
  const json: Record<string, JsonValue> = {};
  for (const key of new Set(query.keys())) {
    const field = schema.fields.find((f) => f.jsonName === key || f.name === key);
    if (field === undefined) throw new HttpFailure(httpError(400, `unknown query parameter "${key}"`, { field: key }));
    const values = query.getAll(key);
    const scalar = field.fieldKind === 'scalar' || field.fieldKind === 'enum' || (field.fieldKind === 'list' && field.listKind !== 'message');
    if (!scalar) throw new HttpFailure(httpError(400, `${field.jsonName} cannot be given in the query string`, { field: field.jsonName }));
    const boolean = (field.fieldKind === 'scalar' || field.fieldKind === 'list') && field.scalar === ScalarType.BOOL;
    const parse = (v: string): JsonValue => (boolean && (v === 'true' || v === 'false') ? v === 'true' : v);
    json[field.jsonName] = field.fieldKind === 'list' ? values.map(parse) : parse(values[values.length - 1]!);
  }
  return json;
}
