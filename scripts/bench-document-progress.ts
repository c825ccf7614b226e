// npm run bench:document-progress [-- --documents N] — what a page of ListDocuments costs to
// read with its progress: per document (three queries each, as before) against one batched
// read (three queries per page), side by side in one run, on SQLite and, with
// TRELLIS_BENCH_MYSQL_URL (e.g. mysql://root@127.0.0.1:4000/), on MariaDB/MySQL too.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KbScope } from '@trellis/contracts';
import { createConnection } from 'mysql2/promise';
import { MysqlStore, SqliteStore } from '@trellis/storage';
import type { DocumentRecord, TrellisStore } from '@trellis/storage';
import { loadAverage, runBench } from './bench-kit.mjs';

const flag = process.argv.indexOf('--documents');
const documents = flag >= 0 ? Number(process.argv[flag + 1]) : 1000;
if (!Number.isInteger(documents) || documents < 1) throw new Error('--documents takes a positive integer');
const ROUNDS = 5;

async function fill(store: TrellisStore): Promise<{ scope: KbScope; page: DocumentRecord[] }> {
  const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 'bench' }, { name: 'kb', description: '', settings: { chunkSizeTokens: 512, chunkOverlapTokens: 64, splitter: '', embeddingModel: 'hash', embeddingDimensions: 8, llmModel: '', extractionPromptVersion: '' } });
  const scope = { tenantId: 'bench', kbId: kb.id };
  for (let i = 0; i < documents; i++) {
    const id = `d${String(i).padStart(6, '0')}`;
    await store.repositories.documents.saveDocumentVersion(scope, { id, sourceUri: `${id}.txt`, filename: `${id}.txt`, mimeType: 'text/plain', contentHash: id, version: 1, sizeBytes: 1, metadata: {}, text: id });
    await store.repositories.chunks.upsertChunks(scope, [0, 1, 2].map((ordinal) => ({ id: `${id}-c${ordinal}`, documentId: id, version: 1, ordinal, text: `${id} ${ordinal}`, heading: '', tokenCount: 2, contentHash: `${id}-${ordinal}`, embedding: new Float32Array(8).fill(ordinal + 1) })));
    const at = new Date().toISOString();
    await store.repositories.documents.recordStage(scope, { documentId: id, version: 1, stage: 'chunking', startedAt: at, finishedAt: at });
  }
  return { scope, page: await store.repositories.documents.listDocuments(scope, { limit: documents }) };
}

async function time(work: () => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const started = performance.now();
    await work();
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
}

async function measure(name: string, store: TrellisStore): Promise<void> {
  const { scope, page } = await fill(store);
  const perDocument = await time(() =>
    Promise.all(page.map((d) => Promise.all([store.repositories.chunks.countChunksByStatus(scope, d.id), store.repositories.documents.listStages(scope, d.id, d.version), store.repositories.llmUsage.getDocumentLlmUsage(scope, d.id, d.version)]))),
  );
  const batched = await time(() => store.repositories.documents.listProgress(scope, page.map((d) => ({ documentId: d.id, version: d.version }))));
  console.log(`${name}: ${page.length} documents, per document ${perDocument.toFixed(1)} ms (${3 * page.length} queries), batched ${batched.toFixed(1)} ms (3 queries), median of ${ROUNDS}; load ${loadAverage()} (${cpus().length} cores)`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-progress-'));
  const sqlite = new SqliteStore(join(dir, 'bench.db'));
  await measure('SQLite', sqlite);
  await sqlite.close();
  rmSync(dir, { recursive: true, force: true });
  const mysqlUrl = process.env.TRELLIS_BENCH_MYSQL_URL;
  if (mysqlUrl) {
    const url = new URL(mysqlUrl);
    const database = `trellis_bench_progress_${Date.now()}`;
    url.pathname = `/${database}`;
    const mysql = await MysqlStore.connect(url.href, { poolSize: 4 });
    try {
      await mysql.migrate();
      await measure('MariaDB', mysql);
    } finally {
      await mysql.close();
      url.pathname = '/';
      const admin = await createConnection(url.href);
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await admin.end();
    }
  }
}

runBench(main);
