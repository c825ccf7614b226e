import type { KbSettings } from '@trellis/contracts';
import { describe, expect, it } from 'vitest';
import { stableId } from '@trellis/contracts';
import { SummaryRefresher } from '@trellis/graph';
import type { EntityMentionWrite, SummaryModels } from '@trellis/graph';
import { SqliteStore } from '../src/sqlite/sqlite-store';

const SETTINGS: KbSettings = { chunkSizeTokens: 512, chunkOverlapTokens: 64, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };

function mention(description: string): EntityMentionWrite {
  return { entityId: 'ent_tidb', name: 'TiDB', normalizedName: 'tidb', type: 'database', description, embedding: Float32Array.from([1, 0]) };
}

async function setup() {
  const store = new SqliteStore(':memory:');
  const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'kb', description: '', settings: SETTINGS });
  const scope = { tenantId: 't', kbId: kb.id };
  await store.repositories.documents.saveDocumentVersion(scope, { id: 'd', sourceUri: 'd', filename: 'd', mimeType: 'text/plain', contentHash: 'h', version: 1, sizeBytes: 1, metadata: {}, text: 'x' });
  const chunkIds = [0, 1, 2].map((i) => stableId('chk', i));
  await store.repositories.chunks.upsertChunks(
    scope,
    chunkIds.map((id, i) => ({ id, documentId: 'd', version: 1, ordinal: i, text: `t${i}`, heading: '', tokenCount: 1, contentHash: `h${i}`, embedding: Float32Array.from([0, 1]) })),
  );
  const embedded: string[] = [];
  const summarized: string[][] = [];
  const models: SummaryModels = {
    embed: async (texts) => {
      embedded.push(...texts);
      return texts.map((t) => Float32Array.from([t.length, 1]));
    },
    summarize: async (_heading, descriptions) => {
      summarized.push([...descriptions]);
      return 'TiDB: an LLM summary.';
    },
  };
  return { store, scope, chunkIds, embedded, summarized, refresher: new SummaryRefresher(store.repositories.graphSummaries, models) };
}

describe('SummaryRefresher', () => {
  it('concatenates short summaries, asks the LLM past the limit, and re-embeds only what changed', async () => {
    const { store, scope, chunkIds, embedded, summarized, refresher } = await setup();
    await store.repositories.graphWrites.applyChunkExtraction(scope, chunkIds[0]!, [mention('A distributed SQL database.')], []);
    expect(await refresher.refresh(scope, 60)).toBe(1);
    // The heading and the description are embedded apart (embedDescribed).
    expect(embedded).toEqual(['TiDB (database)', 'A distributed SQL database.']);
    expect(summarized).toEqual([]);

    // Nothing changed: nothing recomputed.
    expect(await refresher.refresh(scope, 60)).toBe(0);
    await store.repositories.graphWrites.applyChunkExtraction(scope, chunkIds[0]!, [mention('A distributed SQL database.')], []);
    expect(await refresher.refresh(scope, 60)).toBe(0);

    // Past 60 characters: the LLM summarises, and the summary is what gets embedded.
    await store.repositories.graphWrites.applyChunkExtraction(scope, chunkIds[1]!, [mention('It speaks the MySQL wire protocol to clients.')], []);
    expect(await refresher.refresh(scope, 60)).toBe(1);
    expect(summarized).toEqual([['A distributed SQL database.', 'It speaks the MySQL wire protocol to clients.']]);
    expect(embedded.slice(-2)).toEqual(['TiDB (database)', 'TiDB: an LLM summary.']);
    expect((await store.repositories.graphReads.getEntities(scope, ['ent_tidb']))[0]?.description).toBe('TiDB: an LLM summary.');

    // A removal brings the short concatenation back, without the removed text.
    await store.repositories.graphWrites.applyChunkExtraction(scope, chunkIds[0]!, [], []);
    expect(await refresher.refresh(scope, 60)).toBe(1);
    expect((await store.repositories.graphReads.getEntities(scope, ['ent_tidb']))[0]?.description).toBe('It speaks the MySQL wire protocol to clients.');
    expect(summarized).toHaveLength(1);
    await store.close();
  });

  it('embeds the heading and the descriptions kept, weighted by length, and truncates when the LLM fails', async () => {
    const { store, scope, chunkIds } = await setup();
    const failures: string[] = [];
    const embedded: string[] = [];
    const refresher = new SummaryRefresher(
      store.repositories.graphSummaries,
      {
        embed: async (texts) => {
          embedded.push(...texts);
          return texts.map((t) => (t === 'TiDB (database)' ? Float32Array.from([1, 0]) : Float32Array.from([0, 2])));
        },
        summarize: async () => Promise.reject(new Error('LLM down')),
      },
      (error) => failures.push(error.message),
    );
    await store.repositories.graphWrites.applyChunkExtraction(scope, chunkIds[0]!, [mention('First fact about the database.')], []);
    expect(await refresher.refresh(scope, 40)).toBe(1);
    const [candidate] = await store.repositories.graphWrites.listEntityCandidates(scope, ['tidb']);
    // 15 characters of heading along x, 30 of description along y (its vector's length does not count).
    expect([...candidate!.embedding].map((v) => v.toFixed(4))).toEqual(['0.4472', '0.8944']);

    await store.repositories.graphWrites.applyChunkExtraction(scope, chunkIds[1]!, [mention('Second fact about it.')], []);
    expect(await refresher.refresh(scope, 40)).toBe(1);
    expect(failures).toEqual(['LLM down']);
    // Truncated to what fits: only the first description is embedded with the heading.
    expect(embedded.slice(-2)).toEqual(['TiDB (database)', 'First fact about the database.']);
    expect((await store.repositories.graphReads.getEntities(scope, ['ent_tidb']))[0]?.description).toBe('First fact about the database.');
    await store.close();
  });
});
