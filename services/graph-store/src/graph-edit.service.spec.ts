import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Metadata } from '@grpc/grpc-js';
import { ErrorCode, stableId } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import { LocalHashEmbedder } from '@trellis/models';
import { resolveActor } from '@trellis/grpc-edge';
import { SqliteStore } from '@trellis/storage';
import type { EntityMentionWrite } from '@trellis/graph';
import { GraphEditService } from './graph-edit.service';
import type { EditContext } from './graph-edit.service';
import { GraphQueryService } from './graph-query.service';
import { normalizeEntityName } from './entity-names';

const SETTINGS = { chunkSizeTokens: 0, chunkOverlapTokens: 0, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };

describe('GraphEditService', () => {
  const embedder = new LocalHashEmbedder(32);
  let store: SqliteStore;
  let edits: GraphEditService;
  let scope: KbScope;
  const ctx: EditContext = { tenant: { tenantId: 't' }, knowledgeBase: 'kb', actor: 'ada' };

  function entity(name: string): EntityMentionWrite {
    const normalizedName = normalizeEntityName(name);
    return { entityId: stableId('ent', 't', scope.kbId, normalizedName), name, normalizedName, type: 'person', description: `${name}.`, embedding: embedder.embedOne(name) };
  }

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'kb', description: '', settings: SETTINGS });
    scope = { tenantId: 't', kbId: kb.id };
    edits = new GraphEditService(store.repositories, embedder);
    await store.repositories.documents.saveDocumentVersion(scope, { id: 'd', sourceUri: 'd', filename: 'd', mimeType: 'text/plain', contentHash: 'h', version: 1, sizeBytes: 1, metadata: {}, text: 'x' });
    await store.repositories.chunks.upsertChunks(scope, [{ id: 'c1', documentId: 'd', version: 1, ordinal: 0, text: 'x', heading: '', tokenCount: 1, contentHash: 'h', embedding: embedder.embedOne('x') }]);
    const [ada, charles] = [entity('Ada Lovelace'), entity('Charles Babbage')];
    await store.repositories.graphWrites.applyChunkExtraction(scope, 'c1', [ada, charles], [
      { relationshipId: 'rel-1', sourceId: ada.entityId, targetId: charles.entityId, label: 'worked with', description: 'Notes.', strength: 4, embedding: embedder.embedOne('worked') },
    ]);
  });

  afterEach(async () => {
    await store.close();
  });

  const code = (promise: Promise<unknown>) => promise.then(
    () => 'resolved',
    (error: { code?: string }) => error.code,
  );

  it('rejects empty names, non-finite weights and empty requests as INVALID_ARGUMENT', async () => {
    const ada = entity('Ada Lovelace').entityId;
    expect(await code(edits.updateEntity(ctx, ada, { name: '  ' }))).toBe(ErrorCode.InvalidArgument);
    expect(await code(edits.updateEntity(ctx, ada, {}))).toBe(ErrorCode.InvalidArgument);
    expect(await code(edits.updateEntity(ctx, '', { type: 'x' }))).toBe(ErrorCode.InvalidArgument);
    expect(await code(edits.updateRelationship(ctx, 'rel-1', { weight: Number.NaN }))).toBe(ErrorCode.InvalidArgument);
    expect(await code(edits.updateRelationship(ctx, 'rel-1', { weight: Number.POSITIVE_INFINITY }))).toBe(ErrorCode.InvalidArgument);
    expect(await code(edits.updateRelationship(ctx, 'rel-1', { label: '' }))).toBe(ErrorCode.InvalidArgument);
    expect(await code(edits.createSynopsis(ctx, { name: '', description: '', entityIds: [ada] }))).toBe(ErrorCode.InvalidArgument);
    expect(await code(edits.createSynopsis(ctx, { name: 'S', description: '', entityIds: [] }))).toBe(ErrorCode.InvalidArgument);
    expect(await code(edits.listEdits(ctx, 5000))).toBe(ErrorCode.InvalidArgument);
    const long = 'x'.repeat(20_001);
    expect(await code(edits.updateEntity(ctx, ada, { description: long }))).toBe(ErrorCode.InvalidArgument);
    expect(await code(edits.updateRelationship(ctx, 'rel-1', { description: long }))).toBe(ErrorCode.InvalidArgument);
    expect(await code(edits.createSynopsis(ctx, { name: 'S', description: long, entityIds: [ada] }))).toBe(ErrorCode.InvalidArgument);
    expect(await code(edits.createSynopsis(ctx, { name: 'S', description: '', entityIds: Array.from({ length: 5_000 }, (_, i) => `e${i}`) }))).toBe(ErrorCode.InvalidArgument);
    const queries = new GraphQueryService(store.repositories);
    expect(await code(queries.searchEntities({ tenantId: 't' }, 'kb', 'q'.repeat(8_001), 10))).toBe(ErrorCode.InvalidArgument);
    expect(await code(queries.getEntity({ tenantId: 't' }, 'kb', 'n'.repeat(1_025)))).toBe(ErrorCode.InvalidArgument);
    expect(await code(queries.getSubgraph({ tenantId: 't' }, 'kb', Array.from({ length: 1_001 }, (_, i) => `e${i}`), 1, 10))).toBe(ErrorCode.InvalidArgument);
    expect(await store.repositories.graphEdits.listGraphEdits(scope, 10)).toEqual([]);
  });

  it('answers NOT_FOUND for unknown ids and FAILED_PRECONDITION for impossible merges', async () => {
    const [ada, charles] = [entity('Ada Lovelace').entityId, entity('Charles Babbage').entityId];
    expect(await code(edits.updateEntity(ctx, 'ent-nope', { type: 'x' }))).toBe(ErrorCode.NotFound);
    expect(await code(edits.deleteEntity(ctx, 'ent-nope'))).toBe(ErrorCode.NotFound);
    expect(await code(edits.updateRelationship(ctx, 'rel-nope', { weight: 1 }))).toBe(ErrorCode.NotFound);
    expect(await code(edits.deleteRelationship(ctx, 'rel-nope'))).toBe(ErrorCode.NotFound);
    expect(await code(edits.mergeEntities(ctx, 'ent-nope', ada))).toBe(ErrorCode.NotFound);
    expect(await code(edits.createSynopsis(ctx, { name: 'S', description: '', entityIds: [ada, 'ent-nope'] }))).toBe(ErrorCode.NotFound);
    expect(await code(edits.undo(ctx, 'edit-nope'))).toBe(ErrorCode.NotFound);
    expect(await code(edits.updateEntity({ ...ctx, knowledgeBase: 'other' }, ada, { type: 'x' }))).toBe(ErrorCode.NotFound);
    expect(await code(edits.mergeEntities(ctx, ada, ada))).toBe(ErrorCode.FailedPrecondition);
    const merged = await edits.mergeEntities(ctx, charles, ada);
    expect(merged.edit).toMatchObject({ action: 'merge-entities', actor: 'ada', targetIds: [charles, ada] });
    expect(await code(edits.mergeEntities(ctx, charles, ada))).toBe(ErrorCode.FailedPrecondition);
    expect(await code(edits.updateEntity(ctx, charles, { type: 'x' }))).toBe(ErrorCode.FailedPrecondition);
  });

  it('a renamed entity is found by its new name; undo gives the old one back', async () => {
    const ada = entity('Ada Lovelace').entityId;
    await edits.updateEntity(ctx, ada, { name: 'Augusta Ada King', type: 'mathematician' });
    const query = new GraphQueryService(store.repositories);
    expect((await query.getEntity(ctx.tenant, 'kb', 'augusta ada king')).entity).toMatchObject({ id: ada, name: 'Augusta Ada King', type: 'mathematician' });
    const [edit] = await edits.listEdits(ctx, 0);
    await edits.undo({ ...ctx, actor: 'bob' }, edit!.id);
    expect((await query.getEntity(ctx.tenant, 'kb', ada)).entity).toMatchObject({ name: 'Ada Lovelace', type: 'person' });
    expect((await edits.listEdits(ctx, 0))[0]).toMatchObject({ id: edit!.id, undoneBy: 'bob' });
  });

  it('a synopsis links its group with "summarizes" relationships and can be undone', async () => {
    const [ada, charles] = [entity('Ada Lovelace').entityId, entity('Charles Babbage').entityId];
    const synopsis = await edits.createSynopsis(ctx, { name: 'Analytical Engine people', description: 'Who built it.', entityIds: [ada, charles, ada] });
    expect(synopsis).toMatchObject({ type: 'synopsis', name: 'Analytical Engine people', mentionCount: 0 });
    const links = await store.repositories.graphReads.relationshipsOfEntities(scope, [synopsis.id]);
    expect(links.map((r) => [r.label, r.targetId]).sort()).toEqual([['summarizes', ada], ['summarizes', charles]].sort());
    const [edit] = await edits.listEdits(ctx, 1);
    expect(edit).toMatchObject({ action: 'create-synopsis', targetIds: [synopsis.id, ada, charles] });
    await edits.undo(ctx, edit!.id);
    expect(await store.repositories.graphReads.getEntities(scope, [synopsis.id])).toEqual([]);
    expect(await store.repositories.graphReads.relationshipsOfEntities(scope, [synopsis.id])).toEqual([]);
  });
});

describe('resolveActor', () => {
  it('takes x-trellis-actor, else the tenant, else anonymous', () => {
    const withActor = new Metadata();
    withActor.set('x-trellis-actor', ' curator@example.org ');
    expect(resolveActor(withActor, { tenantId: 'acme' })).toBe('curator@example.org');
    expect(resolveActor(new Metadata(), { tenantId: 'acme' })).toBe('tenant:acme');
    expect(resolveActor(undefined, { tenantId: 'default' })).toBe('anonymous');
  });
});
