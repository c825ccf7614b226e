import type { IndexStatus, KbScope, OutboxEvent } from '@trellis/contracts';
import type { ChunkFilter, ChunkRecord, NewChunk, ScoredChunk } from '../records';
import type { ChunkRepository } from '../repositories/chunk.repository';
import type { StuckChunk } from '../repositories/stuck-work';
import { CHUNK_COLUMNS, CURRENT_CHUNKS, batches, compareIds, inIdOrder, marks, toChunk, toStuckWork } from '../row-mappers';
import { chunksRemainingOf, recountChunksRemaining, setChunkStatusCounted, versionsOf } from './chunk-progress-sql';
import { chunkCountsOf } from './document-progress-sql';
import { indexedText } from './full-text';
import { appendOutboxEvents } from './outbox-sql';
import { takeInserted } from './sql-dialect';
import type { AnalyzedText } from './full-text';
import { SqlRepository } from './sql-engine';
import { rowsWhereIn } from './sql-session';
import type { SqlSession, SqlValue } from './sql-session';
import { chunkCandidates } from './vector-ranking';
import type { Scored } from './vector-ranking';

/** Columns an upsert takes from the new row; `status` is decided first (see upsertChunks). */
const REWRITTEN_COLUMNS = ['text', 'heading', 'token_count', 'content_hash', 'fts_length', 'embedding', 'updated_at'];

/** Chunks of documents: written with their embeddings and full-text entries, read back and searched. */
export class SqlChunks extends SqlRepository implements ChunkRepository {
  /**
   * Upserts the chunks, in id order (the lock order), with their full-text entries. A chunk whose
   * content is unchanged keeps an 'extracted' or 'graphed' status; any other becomes 'embedded'.
   * A chunk listed twice ends as its last copy. The text is analysed before the transaction, so a
   * retried transaction does not redo the work.
   */
  async upsertChunks(scope: KbScope, chunks: readonly NewChunk[]): Promise<void> {
    const byId = new Map<string, NewChunk>();
    for (const c of chunks) byId.set(c.id, c);
    if (byId.size === 0) return;
    const ids = [...byId.keys()].sort();
    const texts = new Map<string, AnalyzedText>();
    for (const [id, c] of byId) texts.set(id, this.engine.fullText.analyze(indexedText(c.heading, c.text)));
    await this.changing(scope, ['chunks'], () => this.db.transaction((tx) => this.writeChunks(tx, scope, ids, byId, texts)));
  }

  async getChunk(scope: KbScope, chunkId: string): Promise<ChunkRecord | null> {
    return (await this.getChunks(scope, [chunkId]))[0] ?? null;
  }

  /** In the order of `chunkIds`, skipping ids that do not exist. */
  async getChunks(scope: KbScope, chunkIds: readonly string[]): Promise<ChunkRecord[]> {
    const sql = (m: string) => `SELECT ${CHUNK_COLUMNS} FROM chunks WHERE ${this.dialect.byIdScope()} AND id IN (${m})`;
    return inIdOrder(chunkIds, (await rowsWhereIn(this.db, sql, [scope.tenantId, scope.kbId], chunkIds)).map(toChunk));
  }

  async listChunks(scope: KbScope, documentId: string, version: number): Promise<ChunkRecord[]> {
    const rows = await this.db.rows(`SELECT ${CHUNK_COLUMNS} FROM chunks WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ? ORDER BY ordinal`, [
      scope.tenantId,
      scope.kbId,
      documentId,
      version,
    ]);
    return rows.map(toChunk);
  }

  /** Sets the chunk's status, moving its document's chunks-remaining counter with it (see chunk-progress-sql.ts). */
  async setChunkStatus(scope: KbScope, chunkId: string, status: IndexStatus, error: string | null = null, announce: readonly OutboxEvent[] = []): Promise<void> {
    await this.db.transaction(async (tx) => {
      await setChunkStatusCounted(this.dialect, tx, scope, chunkId, status, error);
      await appendOutboxEvents(tx, this.dialect, announce);
    });
  }

  /** Marks the chunk graphed; resolves to its document's chunks still remaining, null when the chunk is not of the current version. */
  async markChunkGraphed(scope: KbScope, chunkId: string): Promise<number | null> {
    return this.db.transaction(async (tx) => {
      await setChunkStatusCounted(this.dialect, tx, scope, chunkId, 'graphed', null);
      return chunksRemainingOf(this.dialect, tx, scope, chunkId);
    });
  }

  async countChunksByStatus(scope: KbScope, documentId: string): Promise<Partial<Record<IndexStatus, number>>> {
    return (await chunkCountsOf(this.db, scope, [documentId])).get(documentId)!;
  }

  /**
   * Chunks of current versions waiting for extraction or the graph (`embedded`, `extracted`)
   * unchanged since `before`, of documents that have not failed, oldest first across every tenant (the sweeper's).
   */
  async listStuckChunks(before: string, limit: number): Promise<StuckChunk[]> {
    const rows = await this.db.rows(
      `SELECT c.tenant_id AS tenant_id, c.kb_id AS kb_id, c.id AS id, c.document_id AS document_id, c.version AS version, c.status AS status,
              c.content_hash AS content_hash, c.updated_at AS updated_at, d.redrive_count AS redrive_count
       FROM ${CURRENT_CHUNKS}
       WHERE c.status IN ('embedded', 'extracted') AND c.updated_at < ? AND d.status NOT IN ('failed', 'graphed')
         AND NOT EXISTS (SELECT 1 FROM llm_paused_chunks p WHERE p.tenant_id = c.tenant_id AND p.kb_id = c.kb_id AND p.chunk_id = c.id)
       ORDER BY c.updated_at, c.tenant_id, c.kb_id, c.id LIMIT ?`,
      [this.dialect.time(before), limit],
    );
    return rows.map((r) => ({ ...toStuckWork(r, String(r.document_id)), chunkId: String(r.id) }));
  }

  /**
   * Two reads, each led by its index: the documents by title key, then their chunks by document.
   * As one join, SQLite (no table statistics) began from the chunks of the knowledge base and
   * looked each one's document up: 0.9 s at 100k chunks for titles no document has.
   */
  async chunkIdsOfDocumentsTitled(scope: KbScope, keys: readonly string[], limit: number): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    const wanted = [...new Set(keys)].filter((k) => k !== '');
    const max = Math.floor(limit);
    if (wanted.length === 0 || max <= 0) return out;
    // Every document has a chunk at least, so no more than `max` documents can have one kept.
    const documents = await this.db.rows(
      `SELECT id, version, title_key FROM documents WHERE tenant_id = ? AND kb_id = ? AND title_key IN (${marks(wanted)}) ORDER BY id LIMIT ${max}`,
      [scope.tenantId, scope.kbId, ...wanted],
    );
    const current = new Map(documents.map((d) => [String(d.id), { version: Number(d.version), key: String(d.title_key) }]));
    const chunks = await rowsWhereIn(
      this.db,
      (m) => `SELECT document_id, version, ordinal, id FROM chunks WHERE tenant_id = ? AND kb_id = ? AND document_id IN (${m})`,
      [scope.tenantId, scope.kbId],
      [...current.keys()],
    );
    const kept = chunks
      .filter((c) => current.get(String(c.document_id))?.version === Number(c.version))
      .sort((a, b) => compareIds(String(a.document_id), String(b.document_id)) || Number(a.ordinal) - Number(b.ordinal))
      .slice(0, max);
    for (const c of kept) {
      const key = current.get(String(c.document_id))!.key;
      if (!out.has(key)) out.set(key, []);
      out.get(key)!.push(String(c.id));
    }
    return out;
  }

  async searchChunksByVector(scope: KbScope, vector: Float32Array, k: number, filter?: ChunkFilter): Promise<ScoredChunk[]> {
    const documents = filter?.documentIds?.length ? new Set(filter.documentIds) : undefined;
    return this.withChunks(scope, await this.engine.vectors.nearest(this.db, chunkCandidates(scope), vector, k, documents));
  }

  async searchChunksFullText(scope: KbScope, query: string, k: number, filter?: ChunkFilter): Promise<ScoredChunk[]> {
    return this.withChunks(scope, await this.engine.fullText.search(this.db, scope, query, k, filter));
  }

  private async withChunks(scope: KbScope, scored: readonly Scored[]): Promise<ScoredChunk[]> {
    const chunks = new Map((await this.getChunks(scope, scored.map((s) => s.item))).map((c) => [c.id, c]));
    return scored.flatMap((s) => {
      const chunk = chunks.get(s.item);
      return chunk ? [{ chunk, score: s.score }] : [];
    });
  }

  private async writeChunks(tx: SqlSession, scope: KbScope, ids: readonly string[], byId: ReadonlyMap<string, NewChunk>, texts: ReadonlyMap<string, AnalyzedText>): Promise<void> {
    const d = this.dialect;
    // Locks the chunks that exist, in id order, and reads what the text index counted for them.
    const sql = (m: string) => `SELECT id, fts_length FROM chunks WHERE ${d.byIdScope()} AND id IN (${m}) ORDER BY id${d.forUpdate}`;
    const previous = new Map((await rowsWhereIn(tx, sql, [scope.tenantId, scope.kbId], ids)).map((r) => [String(r.id), Number(r.fts_length)]));
    // `status` is assigned first: MySQL assigns left to right, and it must see the old hash.
    const at = d.time(new Date().toISOString());
    const status = `status = CASE WHEN content_hash = ${d.inserted('content_hash')} AND status IN ('extracted', 'graphed') THEN status ELSE 'embedded' END`;
    for (const batch of batches(ids, 100)) {
      await tx.exec(
        `INSERT INTO chunks (tenant_id, kb_id, id, document_id, version, ordinal, text, heading, token_count, content_hash, status, error, fts_length, embedding, updated_at)
         VALUES ${batch.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'embedded', NULL, ?, ?, ?)").join(', ')}
         ${d.onConflictUpdate(`${status}, ${takeInserted(d, REWRITTEN_COLUMNS)}`)}`,
        batch.flatMap((id): SqlValue[] => {
          const c = byId.get(id)!;
          return [scope.tenantId, scope.kbId, c.id, c.documentId, c.version, c.ordinal, c.text, c.heading, c.tokenCount, c.contentHash, texts.get(id)!.length, d.embeddingValue(c.embedding), at];
        }),
      );
    }
    await this.engine.fullText.replace(tx, scope, texts, previous);
    await recountChunksRemaining(d, tx, scope, versionsOf([...byId.values()]));
  }
}
