// Cost of graph edits on the chunk write path (SQLite, in memory): chunk writes per second with
// no edits, and with 100 and 200 merges/deletions active. Run after `npm run build`:
//   node scripts/bench-graph-edits.cjs
const { SqliteStore } = require('../libs/storage/dist/index.js');
const S = { chunkSizeTokens: 0, chunkOverlapTokens: 0, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };
const vec = (i) => { const v = new Float32Array(64); v[i % 64] = 1; return v; };
async function run(edits) {
  const store = new SqliteStore(':memory:');
  const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'kb', description: '', settings: S });
  const scope = { tenantId: 't', kbId: kb.id };
  await store.repositories.documents.saveDocumentVersion(scope, { id: 'd', sourceUri: 'd', filename: 'd', mimeType: 't', contentHash: 'h', version: 1, sizeBytes: 1, metadata: {}, text: 'x' });
  const N = 2000;
  const chunks = Array.from({ length: N }, (_, i) => ({ id: `c${i}`, documentId: 'd', version: 1, ordinal: i, text: `t ${i}`, heading: '', tokenCount: 1, contentHash: `h${i}`, embedding: vec(i) }));
  await store.repositories.chunks.upsertChunks(scope, chunks);
  const ent = (i) => ({ entityId: `e${i}`, name: `E${i}`, normalizedName: `e${i}`, type: 'x', description: `d${i}`, embedding: vec(i) });
  const write = (c) => {
    const es = [0, 1, 2, 3, 4].map((k) => ent((c * 3 + k) % 500));
    const rs = [0, 1, 2, 3].map((k) => ({ relationshipId: `r${es[k].entityId}-${es[k + 1].entityId}`, sourceId: es[k].entityId, targetId: es[k + 1].entityId, label: 'l', description: 'x', strength: 3, embedding: vec(k) }));
    return store.repositories.graphWrites.applyChunkExtraction(scope, `c${c}`, es, rs);
  };
  for (let c = 0; c < 500; c++) await write(c);
  for (let i = 0; i < edits; i++) {
    const meta = { id: `edit${String(i).padStart(5, '0')}`, actor: 'a', at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() };
    if (i % 2 === 0) await store.repositories.graphEdits.mergeEntities(scope, `e${i}`, `e${i + 250}`, meta); else await store.repositories.graphEdits.deleteEntity(scope, `e${i}`, meta);
  }
  const t0 = process.hrtime.bigint();
  for (let c = 500; c < N; c++) await write(c);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  console.log(`${edits} edits active: ${N - 500} chunk writes in ${ms.toFixed(0)} ms = ${((ms / (N - 500)) * 1000).toFixed(0)} µs/write`);
  await store.close();
}
(async () => { for (const e of [0, 0, 100, 200]) await run(e); })();
