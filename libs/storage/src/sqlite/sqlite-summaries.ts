import type Database from 'better-sqlite3';
import type { KbScope } from '@trellis/contracts';
import type { EntityCandidate, PendingSummary, SummaryUpdate } from '../records';
import { ENTITY_COLUMNS, inBatches, marks } from './sqlite-rows';
import { toEntity, toPendingSummaries } from '../row-mappers';
import type { Row } from '../row-mappers';
import { bufferToVector, vectorToBuffer } from '../vector-math';

/** Entity resolution candidates and the summaries the graph writer recomputes, on SQLite. */

/**
 * Keeps a summary whose inputs hash (the first parameter) is unchanged; otherwise writes the
 * concatenation (second) and marks it pending (third: the hash again). summary_hash itself must
 * be assigned after this, as in the MySQL adapter, which applies assignments left to right.
 */
export const CHANGED_SUMMARY = `description = CASE WHEN summary_hash = ? THEN description ELSE ? END,
  summary_pending = CASE WHEN summary_hash = ? THEN summary_pending ELSE 1 END`;

export function listEntityCandidates(db: Database.Database, scope: KbScope, normalizedNames: readonly string[]): EntityCandidate[] {
  const out = inBatches([...new Set(normalizedNames)], (batch) =>
    (
      db
        .prepare(`SELECT ${ENTITY_COLUMNS}, embedding FROM entities WHERE tenant_id = ? AND kb_id = ? AND normalized_name IN (${marks(batch)})`)
        .all(scope.tenantId, scope.kbId, ...batch) as Row[]
    ).map((r) => ({ entity: toEntity(r), embedding: r.embedding ? bufferToVector(r.embedding as Buffer) : new Float32Array(0) })),
  );
  return out.sort((a, b) => (a.entity.id < b.entity.id ? -1 : a.entity.id > b.entity.id ? 1 : 0));
}

export function listPendingSummaries(db: Database.Database, scope: KbScope, limit: number): PendingSummary[] {
  const entities = db
    .prepare('SELECT id, name, type, summary_hash FROM entities WHERE tenant_id = ? AND kb_id = ? AND summary_pending = 1 ORDER BY id LIMIT ?')
    .all(scope.tenantId, scope.kbId, limit) as Row[];
  const relationships = db
    .prepare(
      `SELECT r.id, r.label, r.summary_hash, s.name AS source_name, t.name AS target_name FROM relationships r
       JOIN entities s ON s.id = r.source_id JOIN entities t ON t.id = r.target_id
       WHERE r.tenant_id = ? AND r.kb_id = ? AND r.summary_pending = 1 ORDER BY r.id LIMIT ?`,
    )
    .all(scope.tenantId, scope.kbId, limit) as Row[];
  const descriptions = {
    entity: db.prepare('SELECT description FROM entity_mentions WHERE entity_id = ? ORDER BY chunk_id').pluck(),
    relationship: db.prepare('SELECT description FROM relationship_mentions WHERE relationship_id = ? ORDER BY chunk_id').pluck(),
  };
  return toPendingSummaries(entities, relationships, (kind, id) => descriptions[kind].all(id) as string[]);
}

export function listScopesWithPendingSummaries(db: Database.Database): KbScope[] {
  const rows = db
    .prepare('SELECT tenant_id, kb_id FROM entities WHERE summary_pending = 1 UNION SELECT tenant_id, kb_id FROM relationships WHERE summary_pending = 1 ORDER BY 1, 2')
    .all() as Row[];
  return rows.map((r) => ({ tenantId: String(r.tenant_id), kbId: String(r.kb_id) }));
}

/** Compare-and-set on the summary hash: a summary computed from mentions that changed since is dropped. */
export function saveSummaries(db: Database.Database, scope: KbScope, updates: readonly SummaryUpdate[]): number {
  // A description the user set by hand (graph_overlays) wins over the derived summary.
  const update = (table: string, kind: string) =>
    db.prepare(
      `UPDATE ${table} SET description = COALESCE((SELECT o.description FROM graph_overlays o
         WHERE o.tenant_id = ${table}.tenant_id AND o.kb_id = ${table}.kb_id AND o.target_kind = '${kind}' AND o.target_id = ${table}.id), ?),
       embedding = ?, summary_pending = 0 WHERE tenant_id = ? AND kb_id = ? AND id = ? AND summary_hash = ?`,
    );
  const statements = { entity: update('entities', 'entity'), relationship: update('relationships', 'relationship') };
  return db.transaction(() => {
    let saved = 0;
    for (const u of updates) saved += statements[u.kind].run(u.description, vectorToBuffer(u.embedding), scope.tenantId, scope.kbId, u.id, u.summaryHash).changes;
    return saved;
  })();
}
