import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import { LocalHashEmbedder } from '@trellis/models';
import { SqliteStore } from '@trellis/storage';
import type { CommunityWrite } from '@trellis/graph';
import { RetrievalService } from './retrieval.service';

const SETTINGS = { chunkSizeTokens: 0, chunkOverlapTokens: 0, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };
const PASSAGES = ['Marie Curie studied radioactivity in Paris.', 'Johann Sebastian Bach composed cantatas in Leipzig.', 'Mars is the fourth planet from the Sun.'];

describe('RetrievalService.retrieve with scope global and auto', () => {
  const hash = new LocalHashEmbedder(64);
  let store: SqliteStore;
  let scope: KbScope;
  let service: RetrievalService;

  const community = (id: string, title: string, summary: string, chunkId: string): CommunityWrite => ({
    id,
    level: 0,
    parentId: null,
    title,
    summary,
    keyFacts: [{ text: summary, relationshipId: `r-${id}`, chunkIds: [chunkId] }],
    kind: 'extractive',
    contentHash: id.padEnd(64, '0'),
    memberIds: [`${id}-a`, `${id}-b`],
    embedding: hash.embedOne(`${title}: ${summary}`),
  });

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'kb', description: '', settings: SETTINGS });
    scope = { tenantId: 't', kbId: kb.id };
    await store.repositories.documents.saveDocumentVersion(scope, { id: 'd', sourceUri: 'd.txt', filename: 'd.txt', mimeType: 'text/plain', contentHash: 'h', version: 1, sizeBytes: 1, metadata: {}, text: PASSAGES.join('\n') });
    await store.repositories.chunks.upsertChunks(scope, PASSAGES.map((text, ordinal) => ({ id: `c${ordinal}`, documentId: 'd', version: 1, ordinal, text, heading: '', tokenCount: 8, contentHash: `h${ordinal}`, embedding: hash.embedOne(text) })));
    service = new RetrievalService(store.repositories, hash);
  });

  afterEach(async () => {
    await store.close();
  });

  const ask = (query: string, scopeName: string | undefined, topK = 2) => service.retrieve({ tenantId: 't' }, { knowledgeBase: 'kb', query, topK, mode: '', depth: 0, history: [], scope: scopeName });

  it('ranks community reports against the question and returns their source chunks', async () => {
    await store.repositories.communities.saveCommunities(scope, { upserts: [community('science', 'Marie Curie and radioactivity', 'Marie Curie studied radioactivity.', 'c0'), community('music', 'Bach and cantatas', 'Bach composed cantatas in Leipzig.', 'c1')], removedIds: [] }, new Date().toISOString());
    const response = await ask('Which music and cantatas appear across all documents?', 'global', 1);
    expect(response).toMatchObject({ route: 'global', routeReason: 'global scope requested', refinedQuery: 'Which music and cantatas appear across all documents?' });
    expect(response.communities.map((c) => c.id)).toEqual(['music']);
    expect(response.chunks.map((c) => [c.chunkId, c.sourceUri])).toEqual([['c1', 'd.txt']]);
    expect(response.graph).toBeUndefined();
  });

  it('routes auto by the question, local without communities, and leaves a plain request as it was', async () => {
    const local = await ask('What are the main themes?', 'auto');
    expect(local).toMatchObject({ route: 'local', routeReason: 'no communities built for this knowledge base', communities: [] });
    expect(local.graph).toBeDefined();
    await store.repositories.communities.saveCommunities(scope, { upserts: [community('music', 'Bach and cantatas', 'Bach composed cantatas in Leipzig.', 'c1')], removedIds: [] }, new Date().toISOString());
    expect(await ask('What are the main themes?', 'auto')).toMatchObject({ route: 'global', routeReason: 'corpus-wide cue "main themes"' });
    expect(await ask('Where did Bach compose cantatas?', 'auto')).toMatchObject({ route: 'local' });
    const plain = await ask('Where did Bach compose cantatas?', undefined);
    expect(plain).toMatchObject({ route: '', routeReason: '', communities: [] });
    expect(plain.chunks[0]!.chunkId).toBe('c1');
    await expect(ask('x', 'everywhere')).rejects.toThrow(/unknown scope/);
  });
});
