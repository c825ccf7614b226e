import type { KbScope } from '@trellis/contracts';
import type { StageEvent, StageRecord } from '../records';
import { byPipelineOrder, toStage } from '../row-mappers';
import type { SqlSession } from '../sql/sql-session';
import { toSqlTime } from './mysql-rows';

/** Adds one piece of work to its stage's row: earliest start, latest finish, counts, last error. */
export async function recordStage(session: SqlSession, scope: KbScope, event: StageEvent): Promise<void> {
  await session.exec(
    `INSERT INTO document_stages (tenant_id, kb_id, document_id, version, stage, started_at, finished_at, events, failures, last_error)
     VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
     ON DUPLICATE KEY UPDATE started_at = LEAST(started_at, VALUES(started_at)), finished_at = GREATEST(finished_at, VALUES(finished_at)),
       events = events + 1, failures = failures + VALUES(failures), last_error = COALESCE(VALUES(last_error), last_error)`,
    [scope.tenantId, scope.kbId, event.documentId, event.version, event.stage, toSqlTime(event.startedAt), toSqlTime(event.finishedAt), event.error ? 1 : 0, event.error ?? null],
  );
}

export async function listStages(session: SqlSession, scope: KbScope, documentId: string, version: number): Promise<StageRecord[]> {
  const rows = await session.rows('SELECT * FROM document_stages WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ?', [
    scope.tenantId,
    scope.kbId,
    documentId,
    version,
  ]);
  return rows.map(toStage).sort(byPipelineOrder);
}
