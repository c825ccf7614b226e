import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { waitUntilIndexed } from './helpers';

const KEYS = 'key-of-a=tenant-a,key-of-b=tenant-b';
const INTERNAL_TOKEN = 'a-long-internal-secret-for-the-test';
const TEXT = 'Marie Curie led the Radium Institute in Paris. Pierre Curie discovered piezoelectricity with Jacques Curie.';

/** The gRPC status code a call failed with, or "ok". */
async function outcome(call: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await call;
    return 'ok';
  } catch (error) {
    return (error as { code?: number }).code ?? -1;
  }
}

/** Drains a chat stream. */
async function chatOnce(client: TrellisClient, request: Partial<v1.ChatRequest>): Promise<void> {
  for await (const event of client.chat(request)) void event;
}

/**
 * API keys against the real standalone server: without a key, with a wrong key, or with the key
 * of tenant B, no RPC that names tenant A's knowledge base or the ids of its documents,
 * entities, relationships or edits answers with A's data or changes it.
 */
describe('tenant isolation with API keys', () => {
  let server: StandaloneProcess;
  let a: TrellisClient;
  let b: TrellisClient;
  let ids: { document: string; entity: string; otherEntity: string; relationship: string; edit: string; community: string };

  beforeAll(async () => {
    server = await startStandaloneProcess({ env: { TRELLIS_API_KEYS: KEYS, TRELLIS_INTERNAL_TOKEN: INTERNAL_TOKEN, TRELLIS_EMBEDDINGS: 'hash' } });
    a = new TrellisClient({ address: server.grpcAddress, apiKey: 'key-of-a' });
    b = new TrellisClient({ address: server.grpcAddress, apiKey: 'key-of-b' });
    await a.createKnowledgeBase({ name: 'alpha' });
    await a.createKnowledgeBase({ name: 'only-a' });
    const document = await a.uploadDocument({ knowledgeBase: 'alpha', filename: 'curie.txt', sourceUri: 'curie.txt' }, Buffer.from(TEXT));
    await waitUntilIndexed(a, 'alpha', [document.id]);
    const graph = await a.exportGraph('alpha');
    const [first, second] = graph.entities;
    await a.updateEntity({ knowledgeBase: 'alpha', entityId: first!.id, description: 'edited by tenant A' });
    const edit = (await a.listGraphEdits('alpha')).edits[0]!;
    await a.rebuildCommunities('alpha');
    const community = (await a.listCommunities('alpha')).communities[0]!.id;
    ids = { document: document.id, entity: first!.id, otherEntity: second!.id, relationship: graph.relationships[0]!.id, edit: edit.id, community };
    // Tenant B has a knowledge base of the same name: ids of A's must still mean nothing there.
    await b.createKnowledgeBase({ name: 'alpha' });
  }, 120_000);

  afterAll(async () => {
    a?.close();
    b?.close();
    await server?.dispose();
  });

  /** Every RPC, against tenant A's knowledge bases and ids. */
  const calls = (c: TrellisClient): Record<string, () => Promise<unknown>> => ({
    GetKnowledgeBase: () => c.getKnowledgeBase('only-a'),
    UpdateKnowledgeBase: () => c.updateKnowledgeBase({ knowledgeBase: 'only-a', description: 'taken over' }),
    DeleteKnowledgeBase: () => c.deleteKnowledgeBase('only-a'),
    ListDocuments: () => c.listDocuments('only-a'),
    GetDocument: () => c.getDocument('alpha', ids.document),
    DeleteDocument: () => c.deleteDocument('alpha', ids.document),
    ReindexDocument: () => c.reindexDocument('alpha', ids.document),
    ReindexKnowledgeBase: () => c.reindexKnowledgeBase('only-a'),
    UploadDocument: () => c.uploadDocument({ knowledgeBase: 'only-a', filename: 'x.txt' }, Buffer.from('planted text')),
    SearchEntities: () => c.searchEntities({ knowledgeBase: 'only-a', query: 'Curie' }),
    GetEntity: () => c.getEntity('alpha', ids.entity),
    GetSubgraph: () => c.getSubgraph({ knowledgeBase: 'alpha', entityIds: [ids.entity] }),
    ExportGraph: () => c.exportGraph('only-a'),
    UpdateEntity: () => c.updateEntity({ knowledgeBase: 'alpha', entityId: ids.entity, name: 'Taken' }),
    DeleteEntity: () => c.deleteEntity('alpha', ids.entity),
    UpdateRelationship: () => c.updateRelationship({ knowledgeBase: 'alpha', relationshipId: ids.relationship, weight: -5 }),
    DeleteRelationship: () => c.deleteRelationship('alpha', ids.relationship),
    MergeEntities: () => c.mergeEntities('alpha', ids.entity, ids.otherEntity),
    CreateSynopsis: () => c.createSynopsis({ knowledgeBase: 'alpha', name: 'Curies', description: 'x', entityIds: [ids.entity] }),
    UndoGraphEdit: () => c.undoGraphEdit('alpha', ids.edit),
    ListGraphEdits: () => c.listGraphEdits('only-a'),
    ListCommunities: () => c.listCommunities('only-a'),
    GetCommunity: () => c.getCommunity('alpha', ids.community),
    RebuildCommunities: () => c.rebuildCommunities('only-a'),
    RetrieveChunks: () => c.retrieveChunks({ knowledgeBase: 'only-a', query: 'Curie' }),
    'RetrieveChunks (additional knowledge bases)': () => c.retrieveChunks({ knowledgeBase: 'beta', additionalKnowledgeBases: ['only-a'], query: 'Curie' }),
    RetrieveGraph: () => c.retrieveGraph({ knowledgeBase: 'only-a', query: 'Curie' }),
    Retrieve: () => c.retrieve({ knowledgeBase: 'only-a', query: 'Curie' }),
    'Retrieve (global)': () => c.retrieve({ knowledgeBase: 'only-a', query: 'What are the main themes?', scope: 'global' }),
    Ask: () => c.ask({ knowledgeBase: 'only-a', question: 'Who led the Radium Institute?' }),
    Chat: () => chatOnce(c, { knowledgeBase: 'only-a', question: 'Who led the Radium Institute?' }),
  });

  it('answers UNAUTHENTICATED to every RPC without a key or with a wrong one', async () => {
    for (const client of [new TrellisClient({ address: server.grpcAddress }), new TrellisClient({ address: server.grpcAddress, apiKey: 'not-a-key' })]) {
      // One at a time: a burst of every RPC at once would meet load shedding (RESOURCE_EXHAUSTED) before authentication.
      const results: Record<string, number | 'ok'> = {};
      for (const [name, call] of Object.entries(calls(client))) results[name] = await outcome(call());
      expect(results).toEqual(Object.fromEntries(Object.keys(results).map((name) => [name, status.UNAUTHENTICATED])));
      expect(await outcome(client.listKnowledgeBases())).toBe(status.UNAUTHENTICATED);
      expect(await outcome(client.createKnowledgeBase({ name: 'planted' }))).toBe(status.UNAUTHENTICATED);
      client.close();
    }
  });

  it("answers NOT_FOUND to tenant B for every RPC naming tenant A's knowledge bases or ids, and changes nothing of A's", async () => {
    await b.createKnowledgeBase({ name: 'beta' });
    const results: Record<string, number | 'ok'> = {};
    // One at a time: a delete must not race the calls that would show whether it worked.
    for (const [name, call] of Object.entries(calls(b))) results[name] = await outcome(call());
    expect(results).toEqual(Object.fromEntries(Object.keys(results).map((name) => [name, status.NOT_FOUND])));

    expect((await b.listKnowledgeBases()).knowledgeBases.map((kb) => kb.name).sort()).toEqual(['alpha', 'beta']);
    expect((await b.listAllDocuments('alpha'))).toEqual([]);
    expect((await b.retrieveChunks({ knowledgeBase: 'alpha', query: 'Curie Radium Institute', mode: 'fulltext' })).chunks).toEqual([]);
    // Tenant A's data, as before.
    expect((await a.getKnowledgeBase('only-a')).description).toBe('');
    expect((await a.getDocument('alpha', ids.document)).id).toBe(ids.document);
    const graph = await a.exportGraph('alpha');
    expect(graph.entities.find((e) => e.id === ids.entity)?.description).toBe('edited by tenant A');
    expect(graph.relationships.find((r) => r.id === ids.relationship)?.weight).not.toBe(-5);
    expect((await a.listGraphEdits('alpha')).edits.map((e) => e.id)).toEqual([ids.edit]);
    expect((await a.retrieveChunks({ knowledgeBase: 'alpha', query: 'Curie Radium Institute', mode: 'fulltext' })).chunks.map((c) => c.documentId)).toEqual([ids.document]);
  });

  it('lets a service act for a tenant only with the internal token', async () => {
    const forwarded = (token: string) => ({ 'x-trellis-tenant': 'tenant-a', 'x-trellis-internal-token': token });
    const anonymous = new TrellisClient({ address: server.grpcAddress });
    const asTenantA = await anonymous.retrieveChunks({ knowledgeBase: 'alpha', query: 'Curie Radium Institute', mode: 'fulltext' }, forwarded(INTERNAL_TOKEN));
    expect(asTenantA.chunks.map((c) => c.documentId)).toEqual([ids.document]);
    expect(await outcome(anonymous.retrieveChunks({ knowledgeBase: 'alpha', query: 'Curie' }, forwarded('guessed')))).toBe(status.UNAUTHENTICATED);
    // A tenant's own key does not let it claim another tenant.
    expect((await b.retrieveChunks({ knowledgeBase: 'alpha', query: 'Curie Radium Institute', mode: 'fulltext' }, { 'x-trellis-tenant': 'tenant-a' })).chunks).toEqual([]);
    anonymous.close();
  });
});
