import type { IndexStatus, KbScope } from '@trellis/contracts';
import { LLM_USAGE_SUMS, toLlmUsage } from '../llm-budget';
import type { LlmUsage, StageRecord } from '../records';
import type { DocumentVersionRef } from '../repositories/document.repository';
import { CURRENT_CHUNKS, byPipelineOrder, marks, toStage } from '../row-mappers';
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

export async function stagesOf(db: SqlDatabase, scope: KbScope, versions: readonly DocumentVersionRef[]): Promise<Map<string, StageRecord[]>> {
  const stages = new Map(versions.map((v) => [v.documentId, [] as StageRecord[]]));
  if (versions.length === 0) return stages;
  const wanted = new Map(versions.map((v) => [v.documentId, v.version]));
  const rows = await db.rows(`SELECT * FROM document_stages WHERE tenant_id = ? AND kb_id = ? AND document_id IN (${marks(versions)})`, [
    scope.tenantId,
    scope.kbId,
    ...versions.map((v) => v.documentId),
  ]);
  for (const r of rows) if (wanted.get(String(r.document_id)) === Number(r.version)) stages.get(String(r.document_id))!.push(toStage(r));
  for (const list of stages.values()) list.sort(byPipelineOrder);
  return stages;
}

export async function usageOf(db: SqlDatabase, scope: KbScope, versions: readonly DocumentVersionRef[]): Promise<Map<string, LlmUsage>> {
  const usage = new Map(versions.map((v) => [v.documentId, toLlmUsage(undefined)]));
  if (versions.length === 0) return usage;
  const wanted = new Map(versions.map((v) => [v.documentId, v.version]));
  const rows = await db.rows(
    `SELECT document_id, version, ${LLM_USAGE_SUMS} FROM llm_usage WHERE tenant_id = ? AND kb_id = ? AND document_id IN (${marks(versions)}) GROUP BY document_id, version`,
    [scope.tenantId, scope.kbId, ...versions.map((v) => v.documentId)],
  );
  for (const r of rows) if (wanted.get(String(r.document_id)) === Number(r.version)) usage.set(String(r.document_id), toLlmUsage(r));
  return usage;
}

/** Chunks of each document version that wait for their knowledge base's LLM budget. */
export async function pausedOf(db: SqlDatabase, scope: KbScope, versions: readonly DocumentVersionRef[]): Promise<Map<string, number>> {
  const paused = new Map(versions.map((v) => [v.documentId, 0]));
  if (versions.length === 0) return paused;
  const wanted = new Map(versions.map((v) => [v.documentId, v.version]));
  const rows = await db.rows(
    `SELECT document_id, version, COUNT(*) AS n FROM llm_paused_chunks WHERE tenant_id = ? AND kb_id = ? AND document_id IN (${marks(versions)}) GROUP BY document_id, version`,
    [scope.tenantId, scope.kbId, ...versions.map((v) => v.documentId)],
  );
  for (const r of rows) if (wanted.get(String(r.document_id)) === Number(r.version)) paused.set(String(r.document_id), Number(r.n));
  return paused;
}
