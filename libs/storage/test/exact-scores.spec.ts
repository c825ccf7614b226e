import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteReadThreads } from '../src/sqlite/read-threads';
import { SqliteStore } from '../src/sqlite/sqlite-store';
import { TEST_KB_SETTINGS, chunk, saveTestDocument, vectorFor } from './store-contract';

/** Cosine similarity of two vectors, in doubles. */
function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((x, i) => {
    dot += x * b[i]!;
    na += x * x;
    nb += b[i]! ** 2;
  });
  return dot / Math.sqrt(na * nb);
}

describe('exact scores from int8 matrices', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-exact-'));
  afterEach(() => vi.restoreAllMocks());
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // A file store reads the shortlist's stored vectors on its read threads, as it reads its matrices.
  it.each([':memory:', 'file'])('returns exact cosine similarities in exact order, even for rows closer together than int8 can tell apart (%s)', async (where) => {
    const store = new SqliteStore(where === 'file' ? join(dir, 'exact.db') : where);
    const threadReads = vi.spyOn(SqliteReadThreads.prototype, 'rows');
    const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description: '', settings: TEST_KB_SETTINGS });
    const scope = { tenantId: 't1', kbId: kb.id };
    await saveTestDocument(store, scope, 'd1');
    // 40 rows around one direction, each a step of 0.002 further off along another: their
    // similarities to the query differ by far less than int8's error of about 1e-3. All of
    // them fit the shortlist that is scored again (k + 32), so the order must be exact.
    const query = vectorFor(1, 64);
    const off = vectorFor(2, 64);
    const rows = Array.from({ length: 40 }, (_, i) => ({ ...chunk('d1', 1, i, `row ${i}`, i), embedding: query.map((x, d) => x + off[d]! * 2e-3 * ((i * 17) % 40)) }));
    await store.repositories.chunks.upsertChunks(scope, rows);
    const hits = await store.repositories.chunks.searchChunksByVector(scope, query, 10);
    const exact = rows.map((r) => ({ id: r.id, score: cosine(query, r.embedding) })).sort((a, b) => b.score - a.score);
    expect(hits.map((h) => h.chunk.id)).toEqual(exact.slice(0, 10).map((e) => e.id));
    hits.forEach((hit, i) => expect(hit.score).toBeCloseTo(exact[i]!.score, 6));
    const rescored = threadReads.mock.calls.filter(([sql]) => sql.startsWith('SELECT id, embedding FROM chunks'));
    expect(rescored.length).toBe(where === 'file' ? 1 : 0);
    await store.close();
  });
});
