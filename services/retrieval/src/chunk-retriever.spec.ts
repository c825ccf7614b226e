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
    graphReads: { chunkIdsForEntities: async () => new Map(), entityIdsForChunks: async () => new Map() },
  };
}

/** Vector and full-text rankings as fixed score tables (best first), cut to the k asked for. */
function tableReads(vector: Array<[string, number]>, fulltext: (query: string) => Array<[string, number]>, texts: Record<string, string> = {}): ChunkRetrieverReads {
  const ranked = (table: Array<[string, number]>, k: number) => table.slice(0, k).map(([id, score]) => ({ chunk: chunk(id, texts[id] ?? id), score }));
  return {
    chunks: { searchChunksByVector: async (_s, _v, k) => ranked(vector, k), searchChunksFullText: async (_s, q, k) => ranked(fulltext(q), k), getChunks: async () => [] },
    graphReads: { chunkIdsForEntities: async () => new Map(), entityIdsForChunks: async () => new Map() },
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

  it('returns the same first five in hybrid mode whether 5 or 10 results are asked for', async () => {
    // "both" ranks 20th in each signal: only a fusion that looks that deep sees it twice,
    // which lifts it above hits that one signal found. Fusion depth must not follow k.
    const ranks = Array.from({ length: 40 }, (_, i) => i);
    const vector = ranks.map((i): [string, number] => [i === 19 ? 'both' : `v${i}`, 0.9 - i * 0.005]);
    const fulltext = ranks.map((i): [string, number] => [i === 19 ? 'both' : `f${i}`, 10 - i * 0.05]);
    const retriever = new ChunkRetriever(tableReads(vector, () => fulltext));
    const q = { scope, queryVector: new Float32Array(4), queryText: 'lowercase only, so no second hop' };
    const five = (await retriever.retrieve('hybrid', { ...q, k: 5 })).map((h) => h.chunk.id);
    const ten = (await retriever.retrieve('hybrid', { ...q, k: 10 })).map((h) => h.chunk.id);
    expect(five).toHaveLength(5);
    expect(five).toContain('both');
    expect(ten.slice(0, 5)).toEqual(five);
  });

  it('keeps a strong dense hit in the top results beside what the second hop finds', async () => {
    // The second hop's query (question + names of the best passage) ranks other passages
    // first; the dense hit at rank 2 that no other signal holds must still be returned.
    const texts = { film: 'Harbour of Lanterns is a film directed by Odile Marchetti', dense: 'where the director was born' };
    const vector: Array<[string, number]> = [['film', 0.9], ['dense', 0.85], ...Array.from({ length: 10 }, (_, i): [string, number] => [`v${i}`, 0.3 - i * 0.01])];
    const fulltext = (query: string): Array<[string, number]> =>
      query.includes('Odile') ? [['film', 9], ...Array.from({ length: 10 }, (_, i): [string, number] => [`hop${i}`, 8 - i * 0.1])] : [['film', 9], ['f1', 4], ['f2', 3]];
    const hits = await new ChunkRetriever(tableReads(vector, fulltext, texts)).retrieve('hybrid', { scope, queryVector: new Float32Array(4), queryText: 'Where was the director of Harbour of Lanterns born', k: 5 });
    const ids = hits.map((h) => h.chunk.id);
    expect(ids[0]).toBe('film');
    expect(ids).toContain('dense');
    expect(ids).toContain('hop0');
    expect(hits.find((h) => h.chunk.id === 'hop0')!.signals.map((s) => s.source)).toEqual(['second-hop']);
    // Scores descend with the merged order.
    expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
  });

  it('gives a question about two things both of their passages before what the first one points to', async () => {
    // The second hop (names of the best passage) ranks the band member first; the other band the
    // question names is second in the first pass and must take the second place.
    const texts = {
      joke: 'Killing Joke are an English rock band formed in 1978 by Jaz Coleman',
      zeppelin: 'Led Zeppelin were an English rock band formed in London in 1968',
      coleman: 'Jaz Coleman is the singer of Killing Joke',
    };
    const vector: Array<[string, number]> = [['joke', 0.9], ['zeppelin', 0.85], ['coleman', 0.5]];
    const fulltext = (q: string): Array<[string, number]> => (q.includes('Jaz Coleman') ? [['joke', 9], ['coleman', 8], ['zeppelin', 2]] : [['joke', 9], ['zeppelin', 8], ['coleman', 1]]);
    const retriever = new ChunkRetriever(tableReads(vector, fulltext, texts));
    const ask = (queryText: string) => retriever.retrieve('hybrid', { scope, queryVector: new Float32Array(4), queryText, k: 3 }).then((hits) => hits.map((h) => h.chunk.id));
    expect(await ask('Which band was formed first, Killing Joke or Led Zeppelin?')).toEqual(['joke', 'zeppelin', 'coleman']);
    // A question about one thing keeps the second hop's turn.
    expect(await ask('Who sings in the band Killing Joke?')).toEqual(['joke', 'coleman', 'zeppelin']);
  });

  it('puts the page titled by a name of the best passage ahead of pages that only mention it', async () => {
    // The film passage names Odile Marchetti. Full text ranks two pages that mention her above
    // her own page, which says nothing the question asks; only its title ties it to the name.
    const texts = {
      film: 'Harbour of Lanterns is a film directed by Odile Marchetti',
      mention1: 'Odile Marchetti attended the festival where Harbour of Lanterns premiered',
      mention2: 'critics praised Odile Marchetti and the cast of Harbour of Lanterns',
      about: 'a French screenwriter who grew up in Ravensford',
    };
    const vector: Array<[string, number]> = [['film', 0.9], ['mention1', 0.5]];
    const fulltext = (q: string): Array<[string, number]> => (q.includes('Odile') ? [['film', 9], ['mention1', 8], ['mention2', 7], ['about', 1]] : [['film', 9], ['mention1', 5]]);
    const titles: Record<string, string> = { 'doc-film': 'Harbour of Lanterns', 'doc-about': 'odile  marchetti (director)', 'doc-mention1': 'Festival', 'doc-mention2': 'Reviews' };
    const query = { scope, queryVector: new Float32Array(4), queryText: 'Where did the director of Harbour of Lanterns grow up', k: 3 };
    const without = await new ChunkRetriever(tableReads(vector, fulltext, texts)).retrieve('hybrid', query);
    expect(without.map((h) => h.chunk.id)).toEqual(['film', 'mention1', 'mention2']);
    const asked: string[][] = [];
    const reads = { ...tableReads(vector, fulltext, texts), documents: { documentTitles: async (_s: unknown, ids: readonly string[]) => (asked.push([...ids]), new Map(ids.map((id) => [id, titles[id] ?? '']))) } };
    const hits = await new ChunkRetriever(reads).retrieve('hybrid', query);
    expect(hits.map((h) => h.chunk.id)).toEqual(['film', 'about', 'mention1']);
    expect(asked).toHaveLength(1);
  });

  it('finds the second hop in other words through the dense half of its query', async () => {
    // The birth passage names neither the question's words nor the film passage's names, so
    // full text cannot reach it; only the embedding of the second hop's query (question +
    // names) is near it. Without an embedder it stays out; with one it is the second hop's find.
    const texts = { film: 'Harbour of Lanterns is a film directed by Odile Marchetti', birth: 'the filmmaker grew up in a coastal town' };
    const hopVector = new Float32Array([0, 1, 0, 0]);
    const reads: ChunkRetrieverReads = {
      chunks: {
        searchChunksByVector: async (_s, v, k) => (v[1] === 1 ? [['birth', 0.8], ['film', 0.6]] : [['film', 0.9], ...Array.from({ length: 10 }, (_, i) => [`v${i}`, 0.5 - i * 0.01])]).slice(0, k).map(([id, score]) => ({ chunk: chunk(String(id), texts[id as keyof typeof texts] ?? String(id)), score: Number(score) })),
        searchChunksFullText: async (_s, q, k) => [['film', 9], ...Array.from({ length: 10 }, (_, i): [string, number] => [q.includes('Odile') ? `hop${i}` : `f${i}`, 5 - i * 0.1])].slice(0, k).map(([id, score]) => ({ chunk: chunk(String(id), texts[id as keyof typeof texts] ?? String(id)), score: Number(score) })),
        getChunks: async () => [],
      },
      graphReads: { chunkIdsForEntities: async () => new Map(), entityIdsForChunks: async () => new Map() },
    };
    const query = { scope, queryVector: new Float32Array([1, 0, 0, 0]), queryText: 'Where was the director of Harbour of Lanterns born', k: 5 };
    const retriever = new ChunkRetriever(reads);
    const withoutDense = (await retriever.retrieve('hybrid', query)).map((h) => h.chunk.id);
    expect(withoutDense).not.toContain('birth');
    const embedded: string[] = [];
    const hits = await retriever.retrieve('hybrid', { ...query, embed: async (text) => (embedded.push(text), hopVector) });
    expect(embedded).toEqual(['Where was the director of Harbour of Lanterns born Odile Marchetti']);
    expect(hits.map((h) => h.chunk.id).slice(0, 2)).toEqual(['film', 'birth']);
    expect(hits[1]!.signals.map((s) => s.source)).toEqual(['second-hop']);
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

  it("reads only the graph's passages still wanted without a filter, passes over a removed one, and reads further for a filter", async () => {
    const read: string[][] = [];
    const stored = new Map(['a', 'b', 'c', 'd', 'e', 'f'].map((id) => [id, chunk(id, id)]));
    stored.delete('b');
    const reads: ChunkRetrieverReads = {
      chunks: {
        searchChunksByVector: async () => [],
        searchChunksFullText: async () => [],
        getChunks: async (_s, ids) => {
          read.push([...ids]);
          return ids.flatMap((id) => stored.get(id) ?? []);
        },
      },
      graphReads: { chunkIdsForEntities: async () => new Map(), entityIdsForChunks: async () => new Map() },
    };
    const passageScores = new Map(['a', 'b', 'c', 'd', 'e', 'f'].map((id, i) => [id, 1 - i / 10]));
    const graph = async () => ({ entities: [], relationships: [], entityScores: new Map(), passageScores });
    const retriever = new ChunkRetriever(reads);
    const hits = await retriever.retrieve('graph', { ...query, k: 2, graph });
    expect(hits.map((h) => h.chunk.id)).toEqual(['a', 'c']);
    expect(read).toEqual([['a', 'b'], ['c']]);
    read.length = 0;
    const filtered = await retriever.retrieve('graph', { ...query, k: 2, graph, filter: { documentIds: ['doc-d', 'doc-f'] } });
    expect(filtered.map((h) => h.chunk.id)).toEqual(['d', 'f']);
    expect(read).toEqual([['a', 'b', 'c', 'd', 'e', 'f']]);
  });
});
