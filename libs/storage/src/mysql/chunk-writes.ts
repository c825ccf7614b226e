import type { KbScope } from '@trellis/contracts';
import type { NewChunk } from '../records';
import type { SqlSession, SqlValue } from '../sql/sql-session';
import { batches, marks } from './mysql-rows';
import { documentTerms } from './fulltext-terms';
import type { DocumentTerms } from './fulltext-terms';
import { reindexChunkTexts } from './fulltext-index';
import type { VectorSql } from './vector-sql';

/** Chunks ready to write: deduplicated, in id order (the lock order), with their index terms. */
export interface PreparedChunks {
  ids: string[];
  byId: Map<string, NewChunk>;
  terms: Map<string, DocumentTerms>;
}

/**
 * Tokenizes outside the transaction, so a retried transaction does not redo the work. A chunk
 * listed twice ends as its last copy, as when the SQLite adapter writes them in order.
 */
export function prepareChunks(chunks: readonly NewChunk[]): PreparedChunks {
  const byId = new Map<string, NewChunk>();
  for (const c of chunks) byId.set(c.id, c);
  const ids = [...byId.keys()].sort();
  const terms = new Map<string, DocumentTerms>();
  for (const [id, c] of byId) terms.set(id, documentTerms(c.heading ? `${c.heading}\n${c.text}` : c.text));
  return { ids, byId, terms };
}

/**
 * Upserts the chunks and their postings in the caller's transaction. A chunk whose content is
 * unchanged keeps an 'extracted' or 'graphed' status; any other becomes 'embedded'.
 */
export async function writeChunks(tx: SqlSession, vectors: VectorSql, scope: KbScope, prepared: PreparedChunks): Promise<void> {
  // Locks the chunks that exist, in id order, and reads what the text index counted for them.
  const previous = new Map<string, number>();
  for (const batch of batches(prepared.ids)) {
    const rows = await tx.rows(`SELECT id, fts_length FROM chunks WHERE tenant_id = ? AND kb_id = ? AND id IN (${marks(batch)}) ORDER BY id FOR UPDATE`, [
      scope.tenantId,
      scope.kbId,
      ...batch,
    ]);
    for (const r of rows) previous.set(String(r.id), Number(r.fts_length));
  }
  for (const batch of batches(prepared.ids, 100)) {
    // `status` is assigned first: MySQL assigns left to right, and it must see the old hash.
    await tx.exec(
      `INSERT INTO chunks (tenant_id, kb_id, id, document_id, version, ordinal, text, heading, token_count, content_hash, status, error, fts_length, embedding)
       VALUES ${batch.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'embedded', NULL, ?, ?)").join(', ')}
       ON DUPLICATE KEY UPDATE
         status = IF(content_hash = VALUES(content_hash) AND status IN ('extracted', 'graphed'), status, 'embedded'),
         text = VALUES(text), heading = VALUES(heading), token_count = VALUES(token_count), content_hash = VALUES(content_hash),
         fts_length = VALUES(fts_length), embedding = VALUES(embedding)`,
      batch.flatMap((id): SqlValue[] => {
        const c = prepared.byId.get(id)!;
        const length = prepared.terms.get(id)!.length;
        return [
          scope.tenantId, scope.kbId, c.id, c.documentId, c.version, c.ordinal, c.text, c.heading, c.tokenCount, c.contentHash,
          length, vectors.embeddingValue(c.embedding),
        ];
      }),
    );
  }
  await reindexChunkTexts(tx, scope, prepared.terms, previous);
}
