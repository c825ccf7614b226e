import { createHash } from 'node:crypto';
import type { IndexStatus, KbScope } from '@trellis/contracts';
import type { NewDocumentVersion } from '../records';
import type { SqlSession } from '../sql/sql-session';
import { toSqlTime } from './mysql-rows';

/** Characters per document_texts row: at most 4 MB of utf8mb4, under TiDB's 6 MB row limit. */
export const TEXT_PART_CHARS = 1_000_000;

/** Replaces the text of one version, in row-sized parts, in the caller's transaction. */
export async function writeDocumentText(tx: SqlSession, scope: KbScope, documentId: string, version: number, text: string): Promise<void> {
  const key = [scope.tenantId, scope.kbId, documentId, version];
  await tx.exec('DELETE FROM document_texts WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ?', key);
  const parts = splitText(text);
  for (let part = 0; part < parts.length; part++) {
    await tx.exec('INSERT INTO document_texts (tenant_id, kb_id, document_id, version, part, text) VALUES (?, ?, ?, ?, ?, ?)', [...key, part, parts[part]!]);
  }
}

/** Inserts the document or moves it to this version; its source and creation time stay. */
export async function upsertDocumentRow(
  session: SqlSession,
  scope: KbScope,
  doc: Omit<NewDocumentVersion, 'text'>,
  status: IndexStatus,
  error: string | null,
): Promise<void> {
  const at = toSqlTime(new Date().toISOString());
  await session.exec(
    `INSERT INTO documents (tenant_id, kb_id, id, source_uri, source_hash, filename, mime_type, content_hash, version, status, error, size_bytes, metadata, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON DUPLICATE KEY UPDATE filename = VALUES(filename), mime_type = VALUES(mime_type), content_hash = VALUES(content_hash),
       version = VALUES(version), status = VALUES(status), error = VALUES(error), size_bytes = VALUES(size_bytes),
       metadata = VALUES(metadata), updated_at = VALUES(updated_at)`,
    [
      scope.tenantId, scope.kbId, doc.id, doc.sourceUri, sourceHash(doc.sourceUri), doc.filename, doc.mimeType, doc.contentHash,
      doc.version, status, error, doc.sizeBytes, JSON.stringify(doc.metadata), at, at,
    ],
  );
}

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
