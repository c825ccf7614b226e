import { describe, expect, it } from 'vitest';
import { JsonBodyError, apiMethod, requestFromJson, responseToJson } from './proto-json';

const blame = (run: () => unknown): { message: string; field?: string } => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(JsonBodyError);
    return { message: (error as JsonBodyError).message, field: (error as JsonBodyError).field };
  }
  throw new Error('expected a JsonBodyError');
};

describe('the proto3 JSON mapping from the descriptors', () => {
  const create = apiMethod('KnowledgeBaseService', 'CreateKnowledgeBase').input;

  it('turns proto3 JSON into the object the gRPC client sends (numbers from strings, optionals left out)', () => {
    expect(requestFromJson(create, { name: 'kb', chunking: { chunkSizeTokens: '256' } })).toEqual({ name: 'kb', description: '', chunking: { chunkSizeTokens: 256, chunkOverlapTokens: 0, splitter: '' } });
    const update = apiMethod('GraphService', 'UpdateEntity').input;
    expect(requestFromJson(update, { knowledgeBase: 'k', entityId: 'e', name: 'New' })).toEqual({ knowledgeBase: 'k', entityId: 'e', name: 'New' });
    // snake_case proto names are accepted too, as proto3 JSON requires.
    expect(requestFromJson(update, { knowledge_base: 'k', entity_id: 'e' })).toEqual({ knowledgeBase: 'k', entityId: 'e' });
  });

  it('names the field at fault, nested ones included, and unknown keys', () => {
    expect(blame(() => requestFromJson(create, { name: 5 }))).toMatchObject({ field: 'name', message: expect.stringContaining('expected string') });
    expect(blame(() => requestFromJson(create, { chunking: { chunkSizeTokens: -1 } }))).toMatchObject({ field: 'chunking.chunkSizeTokens' });
    expect(blame(() => requestFromJson(create, { extraction: { entityTypes: 'person' } }))).toMatchObject({ field: 'extraction.entityTypes' });
    expect(blame(() => requestFromJson(create, { colour: 'red' }))).toMatchObject({ field: 'colour', message: expect.stringContaining('unknown') });
    expect(blame(() => requestFromJson(create, { resolution: { colour: 'red' } }))).toMatchObject({ field: 'resolution.colour' });
  });

  it('writes responses as proto3 JSON: enum names, 64-bit integers as strings, defaults included, oneof by its case', () => {
    const document = apiMethod('KnowledgeBaseService', 'GetDocument').output;
    const json = responseToJson(document, { id: 'd', status: 'INDEX_STATUS_GRAPHED', sizeBytes: 1234, chunkCounts: [{ status: 'INDEX_STATUS_PENDING', count: 2 }], metadata: { a: 'b' } }) as Record<string, unknown>;
    expect(json).toMatchObject({ id: 'd', status: 'INDEX_STATUS_GRAPHED', sizeBytes: '1234', chunkCounts: [{ status: 'INDEX_STATUS_PENDING', count: 2 }], metadata: { a: 'b' }, error: '', version: 0 });
    const event = apiMethod('ChatService', 'Chat').output;
    expect(responseToJson(event, { event: 'token', token: 'Hello ' })).toEqual({ token: 'Hello ' });
    expect(responseToJson(event, { event: 'done', done: { text: 'x [1]', citations: [{ index: 1, chunkId: 'c' }] } })).toMatchObject({ done: { text: 'x [1]', citations: [{ index: 1, chunkId: 'c' }] } });
  });
});
