import { describe, expect, it } from 'vitest';
import type { RerankerProvider } from '@trellis/models';
import type { ChunkRecord } from '@trellis/storage';
import { ChunkRetriever } from './chunk-retriever';
import type { ChunkRetrieverReads } from './chunk-retriever';

const scope = { tenantId: 't', kbId: 'kb' };

function chunk(id: string, text: string): ChunkRecord {
  return { id, kbId: 'kb', documentId: `doc-${id}`, version: 1, ordinal: 0, text, heading: '', tokenCount: 10, contentHash: id, status: 'graphed' as ChunkRecord['status'], error: null };
}

/** Full text over a fixed list: a chunk matches when it shares a word with the query, scored by how many. */
function fakeReads(chunks: ChunkRecord[]): ChunkRetrieverReads {
  const words = (t: string) => new Set(t.toLowerCase().match(/[a-z]+/g) ?? []);
  const search = async (_scope: unknown, query: string, k: number) => {
    const q = words(query);
    return chunks
      .map((c) => ({ chunk: c, score: [...words(c.text)].filter((w) => q.has(w)).length }))
      .filter((h) => h.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, k);
  };
  return {
    chunks: { searchChunksFullText: search, searchChunksByVector: async () => [], getChunks: async () => [] },
    graphReads: { chunkIdsForEntities: async () => new Map() },
  };
}

describe('ChunkRetriever', () => {
  const corpus = [
    chunk('film', 'Harbour of Lanterns is a film directed by Odile Marchetti'),
    chunk('director', 'Odile Marchetti was born in Ravensford'),
    chunk('noise', 'A film festival is held in the harbour every winter'),
  ];
  const query = { scope, queryVector: new Float32Array(4), queryText: 'Where was the director of Harbour of Lanterns born', k: 2 };

  it('hybrid mode follows the names of the best first-pass passage to the second hop', async () => {
    const hits = await new ChunkRetriever(fakeReads(corpus)).retrieve('hybrid', query);
    expect(hits.map((h) => h.chunk.id)).toEqual(['film', 'director']);
    expect(hits[1]!.signals.map((s) => s.source)).toContain('second-hop');
  });

  it('re-orders oversampled candidates with a reranker and says so', async () => {
    const reverse: RerankerProvider = {
      model: 'reverse',
      rerank: async (_q, candidates) => candidates.map((c, i) => ({ id: c.id, score: i })).reverse(),
    };
    const hits = await new ChunkRetriever(fakeReads(corpus), undefined, 'max', reverse).retrieve('fulltext', { ...query, k: 1 });
    expect(hits).toHaveLength(1);
    expect(hits[0]!.signals.map((s) => s.source)).toEqual(['fulltext', 'rerank']);
    expect(hits[0]!.chunk.id).not.toBe('film');
  });
});
