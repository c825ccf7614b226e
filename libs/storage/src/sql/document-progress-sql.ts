import type { IndexStatus, KbScope } from '@trellis/contracts';
import { LLM_USAGE_SUMS, toLlmUsage } from '../llm-budget';
import type { LlmUsage, StageRecord } from '../records';
import type { DocumentVersionRef } from '../repositories/document.repository';
import { CURRENT_CHUNKS, byPipelineOrder, marks, toStage } from '../row-mappers';
import type { Row } from '../row-mappers';
import type { SqlDatabase } from './sql-session';

/**
 * How far indexing of many document versions has come, three queries for all of them (a
 * page of ListDocuments is up to 1,000 documents): chunks of the current version by status,
 * the stages of the version, and its LLM usage. Each map holds every asked document, empty
 * where nothing was recorded.
 */
export async function chunkCountsOf(db: SqlDatabase, scope: KbScope, documentIds: readonly string[]): Promise<Map<string, Partial<Record<IndexStatus, number>>>> {
  const counts = new Map(documentIds.map((id) => [id, {} as Partial<Record<IndexStatus, number>>]));
  if (documentIds.length === 0) return counts;
  const rows = await db.rows(
    `SELECT c.document_id AS document_id, c.status AS status, COUNT(*) AS n FROM ${CURRENT_CHUNKS}
     WHERE c.tenant_id = ? AND c.kb_id = ? AND c.document_id IN (${marks(documentIds)}) GROUP BY c.document_id, c.status`,
    [scope.tenantId, scope.kbId, ...documentIds],
  );
  for (const r of rows) counts.get(String(r.document_id))![String(r.status) as IndexStatus] = Number(r.n);
  return counts;
}

/**
 * One value per asked document, from `sql`'s rows of the asked versions (`sql` selects
 * document_id and version, and fills `IN (${marks})` with the document ids); `empty` where none.
 */
async function perVersion<T>(db: SqlDatabase, scope: KbScope, versions: readonly DocumentVersionRef[], sql: (marks: string) => string, empty: () => T, add: (value: T, row: Row) => T): Promise<Map<string, T>> {
  const values = new Map(versions.map((v) => [v.documentId, empty()]));
  if (versions.length === 0) return values;
  const wanted = new Map(versions.map((v) => [v.documentId, v.version]));
  const rows = await db.rows(sql(marks(versions)), [scope.tenantId, scope.kbId, ...versions.map((v) => v.documentId)]);
  for (const r of rows) if (wanted.get(String(r.document_id)) === Number(r.version)) values.set(String(r.document_id), add(values.get(String(r.document_id))!, r));
  return values;
}

export async function stagesOf(db: SqlDatabase, scope: KbScope, versions: readonly DocumentVersionRef[]): Promise<Map<string, StageRecord[]>> {
  const sql = (m: string) => `SELECT * FROM document_stages WHERE tenant_id = ? AND kb_id = ? AND document_id IN (${m})`;
  const stages = await perVersion<StageRecord[]>(db, scope, versions, sql, () => [], (list, r) => [...list, toStage(r)]);
  for (const list of stages.values()) list.sort(byPipelineOrder);
  return stages;
}

export function usageOf(db: SqlDatabase, scope: KbScope, versions: readonly DocumentVersionRef[]): Promise<Map<string, LlmUsage>> {
  const sql = (m: string) => `SELECT document_id, version, ${LLM_USAGE_SUMS} FROM llm_usage WHERE tenant_id = ? AND kb_id = ? AND document_id IN (${m}) GROUP BY document_id, version`;
  return perVersion(db, scope, versions, sql, () => toLlmUsage(undefined), (_, r) => toLlmUsage(r));
}

/** Chunks of each document version that wait for their knowledge base's LLM budget. */
export function pausedOf(db: SqlDatabase, scope: KbScope, versions: readonly DocumentVersionRef[]): Promise<Map<string, number>> {
  const sql = (m: string) => `SELECT document_id, version, COUNT(*) AS n FROM llm_paused_chunks WHERE tenant_id = ? AND kb_id = ? AND document_id IN (${m}) GROUP BY document_id, version`;
  return perVersion(db, scope, versions, sql, () => 0, (_, r) => Number(r.n));
}
