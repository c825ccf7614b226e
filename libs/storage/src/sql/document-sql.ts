import { createHash } from 'node:crypto';
import { TrellisError, titleKey } from '@trellis/contracts';
import type { IndexStatus, KbScope, OutboxEvent } from '@trellis/contracts';
import type { DocumentRecord, NewDocumentVersion, StageEvent, StageRecord } from '../records';
import type { DocumentIndexingProgress, DocumentPage, DocumentProgress, DocumentRepository, DocumentVersionRef, UnfinishedDocument } from '../repositories/document.repository';
import type { StuckDocument } from '../repositories/stuck-work';
import { toDocument, toStuckWork } from '../row-mappers';
import { chunkCountsOf, pausedOf, stagesOf, usageOf } from './document-progress-sql';
import { removeDocumentChunks } from './graph-write-sql';
import { appendOutboxEvents } from './outbox-sql';
import { takeInserted } from './sql-dialect';
import { SqlRepository } from './sql-engine';
import { execWhereIn, rowsWhereIn } from './sql-session';
import type { SqlSession } from './sql-session';

/** Characters per document_texts row: at most 4 MB of utf8mb4, under TiDB's 6 MB row limit. */
export const TEXT_PART_CHARS = 1_000_000;

const DOCUMENT_VERSION_COLUMNS = ['filename', 'mime_type', 'content_hash', 'version', 'status', 'error', 'size_bytes', 'metadata', 'title', 'title_key', 'updated_at', 'redrive_count'];

/** What documents are unique by: source URIs can be longer than any index key. */
export function sourceHash(sourceUri: string): string {
  return createHash('sha256').update(sourceUri).digest('hex');
}

/** Splits text into parts of at most `partChars` without cutting a surrogate pair; '' is one empty part. */
export function splitText(text: string, partChars = TEXT_PART_CHARS): string[] {
  const parts: string[] = [];
  let start = 0;
  while (start < text.length || parts.length === 0) {
    let end = Math.min(text.length, start + partChars);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && end - start > 1 && last >= 0xd800 && last <= 0xdbff) end--;
    parts.push(text.slice(start, end));
    start = end;
  }
  return parts;
}

/**
 * Documents with their versions' text and pipeline stages. The text of a version is kept in
 * row-sized parts: TiDB caps one row at 6 MB by default and MariaDB a packet at 16 MB, below a
 * 50 MB document.
 */
export class SqlDocuments extends SqlRepository implements DocumentRepository {
  async findDocumentBySource(scope: KbScope, sourceUri: string): Promise<DocumentRecord | null> {
    const [row] = await this.db.rows('SELECT * FROM documents WHERE tenant_id = ? AND kb_id = ? AND source_hash = ? AND source_uri = ?', [
      scope.tenantId,
      scope.kbId,
      sourceHash(sourceUri),
      sourceUri,
    ]);
    return row ? toDocument(row) : null;
  }

  async saveDocumentVersion(scope: KbScope, doc: NewDocumentVersion, announce: readonly OutboxEvent[] = []): Promise<DocumentRecord> {
    await this.db.transaction(async (tx) => {
      const key = [scope.tenantId, scope.kbId, doc.id, doc.version];
      await tx.exec('DELETE FROM document_texts WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ?', key);
      const parts = splitText(doc.text);
      for (let part = 0; part < parts.length; part++) {
        await tx.exec('INSERT INTO document_texts (tenant_id, kb_id, document_id, version, part, text) VALUES (?, ?, ?, ?, ?, ?)', [...key, part, parts[part]!]);
      }
      await this.upsertDocumentRow(tx, scope, doc, 'pending', null);
      await appendOutboxEvents(tx, this.dialect, announce);
    });
    // A new current version changes which chunks search may return.
    this.changed(scope, ['chunks']);
    return this.requireDocument(scope, doc.id);
  }

  async saveFailedDocument(scope: KbScope, doc: Omit<NewDocumentVersion, 'text'>, error: string): Promise<DocumentRecord> {
    await this.upsertDocumentRow(this.db, scope, doc, 'failed', error);
    this.changed(scope, ['chunks']);
    return this.requireDocument(scope, doc.id);
  }

  async getDocument(scope: KbScope, documentId: string): Promise<DocumentRecord | null> {
    const [row] = await this.db.rows(`SELECT * FROM documents WHERE ${this.dialect.byIdScope()} AND id = ?`, [scope.tenantId, scope.kbId, documentId]);
    return row ? toDocument(row) : null;
  }

  async listDocuments(scope: KbScope, page?: DocumentPage): Promise<DocumentRecord[]> {
    if (page === undefined) {
      return (await this.db.rows('SELECT * FROM documents WHERE tenant_id = ? AND kb_id = ? ORDER BY source_uri', [scope.tenantId, scope.kbId])).map(toDocument);
    }
    const where = ['tenant_id = ?', 'kb_id = ?'];
    const params: string[] = [scope.tenantId, scope.kbId];
    if (page.afterId !== undefined) {
      where.push('id > ?');
      params.push(page.afterId);
    }
    if (page.status !== undefined) {
      where.push('status = ?');
      params.push(page.status);
    }
    // An integer literal: not every server accepts a bound LIMIT.
    const limit = Math.max(1, Math.floor(page.limit));
    return (await this.db.rows(`SELECT * FROM documents WHERE ${where.join(' AND ')} ORDER BY id LIMIT ${limit}`, params)).map(toDocument);
  }

  async documentTitles(scope: KbScope, documentIds: readonly string[]): Promise<Map<string, string>> {
    const sql = (m: string) => `SELECT id, title FROM documents WHERE ${this.dialect.byIdScope()} AND id IN (${m})`;
    const rows = await rowsWhereIn(this.db, sql, [scope.tenantId, scope.kbId], [...new Set(documentIds)]);
    return new Map(rows.map((r) => [String(r.id), String(r.title ?? '')]));
  }

  async getDocumentText(scope: KbScope, documentId: string, version: number): Promise<string | null> {
    const rows = await this.db.rows('SELECT text FROM document_texts WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ? ORDER BY part', [
      scope.tenantId,
      scope.kbId,
      documentId,
      version,
    ]);
    return rows.length === 0 ? null : rows.map((r) => String(r.text)).join('');
  }

  async setDocumentStatus(scope: KbScope, documentId: string, version: number, status: IndexStatus, error: string | null = null, announce: readonly OutboxEvent[] = []): Promise<void> {
    const { dialect } = this;
    const update = (session: SqlSession) =>
      session.exec(`UPDATE documents SET status = ?, error = ?, updated_at = ? WHERE ${dialect.byIdScope()} AND id = ? AND version = ?`, [
        status,
        error,
        dialect.time(new Date().toISOString()),
        scope.tenantId,
        scope.kbId,
        documentId,
        version,
      ]);
    if (announce.length === 0) {
      await update(this.db);
      return;
    }
    await this.db.transaction(async (tx) => {
      await update(tx);
      await appendOutboxEvents(tx, dialect, announce);
    });
  }

  async countDocuments(scope: KbScope): Promise<number> {
    const [row] = await this.db.rows('SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND kb_id = ?', [scope.tenantId, scope.kbId]);
    return Number(row?.n ?? 0);
  }

  /** Progress of many document versions in four queries, whatever their number. */
  async listProgress(scope: KbScope, versions: readonly DocumentVersionRef[]): Promise<Map<string, DocumentProgress>> {
    const ids = versions.map((v) => v.documentId);
    const [counts, stages, usage, paused] = await Promise.all([
      chunkCountsOf(this.db, scope, ids),
      stagesOf(this.db, scope, versions),
      usageOf(this.db, scope, versions),
      pausedOf(this.db, scope, versions),
    ]);
    return new Map(ids.map((id) => [id, { chunkCounts: counts.get(id)!, stages: stages.get(id)!, llmUsage: usage.get(id)!, pausedChunks: paused.get(id)! }]));
  }

  async listIndexingProgress(scope: KbScope, documentIds: readonly string[]): Promise<DocumentIndexingProgress[]> {
    const asked = [...new Set(documentIds)];
    const sql = (m: string) => `SELECT * FROM documents WHERE ${this.dialect.byIdScope()} AND id IN (${m})`;
    const found = new Map((await rowsWhereIn(this.db, sql, [scope.tenantId, scope.kbId], asked)).map((row) => [String(row.id), toDocument(row)]));
    const documents = asked.flatMap((id) => found.get(id) ?? []);
    const [counts, paused] = await Promise.all([
      chunkCountsOf(this.db, scope, documents.map((d) => d.id)),
      pausedOf(this.db, scope, documents.map((d) => ({ documentId: d.id, version: d.version }))),
    ]);
    return documents.map((document) => ({ document, chunkCounts: counts.get(document.id)!, pausedChunks: paused.get(document.id)! }));
  }

  deleteDocument(scope: KbScope, documentId: string): Promise<boolean> {
    return this.removeVersions(scope, async (tx) => {
      await removeDocumentChunks(tx, this.engine, scope, documentId);
      for (const table of ['document_texts', 'document_stages', 'llm_paused_chunks']) {
        await tx.exec(`DELETE FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND document_id = ?`, [scope.tenantId, scope.kbId, documentId]);
      }
      return (await tx.exec(`DELETE FROM documents WHERE ${this.dialect.byIdScope()} AND id = ?`, [scope.tenantId, scope.kbId, documentId])) > 0;
    });
  }

  deleteStaleVersions(scope: KbScope, documentId: string, currentVersion: number): Promise<number> {
    return this.removeVersions(scope, async (tx) => {
      const removed = await removeDocumentChunks(tx, this.engine, scope, documentId, currentVersion);
      for (const table of ['document_texts', 'document_stages', 'llm_paused_chunks']) {
        await tx.exec(`DELETE FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version < ?`, [scope.tenantId, scope.kbId, documentId, currentVersion]);
      }
      return removed;
    });
  }

  /** Oldest first: the documents that have waited longest are re-driven first. */
  async listUnfinishedDocuments(): Promise<UnfinishedDocument[]> {
    const rows = await this.db.rows(
      `SELECT tenant_id, kb_id, id, version, status FROM documents WHERE status NOT IN ('graphed', 'failed') ORDER BY updated_at, tenant_id, kb_id, id`,
    );
    return rows.map((r) => ({ tenantId: String(r.tenant_id), kbId: String(r.kb_id), documentId: String(r.id), version: Number(r.version), status: String(r.status) as IndexStatus }));
  }

  /** Documents still `pending` (never chunked) whose row has not changed since `before`, oldest first across every tenant (the sweeper's). */
  async listStuckDocuments(before: string, limit: number): Promise<StuckDocument[]> {
    const rows = await this.db.rows(
      `SELECT tenant_id, kb_id, id, version, status, content_hash, redrive_count, updated_at FROM documents
       WHERE status = 'pending' AND updated_at < ? ORDER BY updated_at, tenant_id, kb_id, id LIMIT ?`,
      [this.dialect.time(before), limit],
    );
    return rows.map((r) => toStuckWork(r, String(r.id)));
  }

  /**
   * Counts one re-drive of the document version and restarts the wait of it and of the listed
   * chunks. Resolves to the version's re-drives so far, or null when the version is no longer
   * current or has finished meanwhile (nothing to re-drive).
   */
  recordRedrive(scope: KbScope, documentId: string, version: number, chunkIds: readonly string[]): Promise<number | null> {
    const d = this.dialect;
    const at = d.time(new Date().toISOString());
    return this.db.transaction(async (tx) => {
      const moved = await tx.exec(
        `UPDATE documents SET redrive_count = redrive_count + 1, updated_at = ?
         WHERE ${d.byIdScope()} AND id = ? AND version = ? AND status NOT IN ('graphed', 'failed')`,
        [at, scope.tenantId, scope.kbId, documentId, version],
      );
      if (moved === 0) return null;
      // In id order, the order chunk writes lock in.
      await execWhereIn(tx, (m) => `UPDATE chunks SET updated_at = ? WHERE ${d.byIdScope()} AND id IN (${m})`, [at, scope.tenantId, scope.kbId], [...chunkIds].sort());
      const [row] = await tx.rows(`SELECT redrive_count FROM documents WHERE ${d.byIdScope()} AND id = ?`, [scope.tenantId, scope.kbId, documentId]);
      return row === undefined ? null : Number(row.redrive_count);
    });
  }

  /** Adds one piece of work to its stage's row: earliest start, latest finish, counts, last error. */
  async recordStage(scope: KbScope, event: StageEvent): Promise<void> {
    const d = this.dialect;
    const merged = `started_at = ${d.least('started_at', d.inserted('started_at'))}, finished_at = ${d.greatest('finished_at', d.inserted('finished_at'))},
      events = events + 1, failures = failures + ${d.inserted('failures')}, last_error = COALESCE(${d.inserted('last_error')}, last_error)`;
    await this.db.exec(
      `INSERT INTO document_stages (tenant_id, kb_id, document_id, version, stage, started_at, finished_at, events, failures, last_error)
       VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?) ${d.onConflictUpdate(merged)}`,
      [scope.tenantId, scope.kbId, event.documentId, event.version, event.stage, d.time(event.startedAt), d.time(event.finishedAt), event.error ? 1 : 0, event.error ?? null],
    );
  }

  async listStages(scope: KbScope, documentId: string, version: number): Promise<StageRecord[]> {
    return (await stagesOf(this.db, scope, [{ documentId, version }])).get(documentId)!;
  }

  /** Inserts the document or moves it to this version; its source and creation time stay. */
  private async upsertDocumentRow(session: SqlSession, scope: KbScope, doc: Omit<NewDocumentVersion, 'text'>, status: IndexStatus, error: string | null): Promise<void> {
    const d = this.dialect;
    const at = d.time(new Date().toISOString());
    await session.exec(
      `INSERT INTO documents (tenant_id, kb_id, id, source_uri, source_hash, filename, mime_type, content_hash, version, status, error, size_bytes, metadata, title, title_key, created_at, updated_at, redrive_count)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0) ${d.onConflictUpdate(takeInserted(d, DOCUMENT_VERSION_COLUMNS))}`,
      [
        scope.tenantId, scope.kbId, doc.id, doc.sourceUri, sourceHash(doc.sourceUri), doc.filename, doc.mimeType, doc.contentHash,
        doc.version, status, error, doc.sizeBytes, JSON.stringify(doc.metadata), doc.title ?? '', titleKey(doc.title ?? ''), at, at,
      ],
    );
  }

  private async requireDocument(scope: KbScope, documentId: string): Promise<DocumentRecord> {
    const document = await this.getDocument(scope, documentId);
    if (document === null) throw TrellisError.unavailable(`document ${documentId} vanished right after it was written`);
    return document;
  }

  private removeVersions<T>(scope: KbScope, work: (tx: SqlSession) => Promise<T>): Promise<T> {
    return this.changing(scope, ['chunks', 'entities', 'relationships'], () => this.db.transaction(work));
  }
}
