import type { KbScope } from '@trellis/contracts';
import type { PendingSummary, SummaryUpdate } from '@trellis/graph';
import type { GraphSummaryRepository } from '../repositories/graph-summary.repository';
import { toPendingSummaries } from '../row-mappers';
import type { Row } from '../row-mappers';
import { recordEntityChanges, recordRelationshipChanges } from './community-change-sql';
import { sampledMentionsOf } from './mention-sql';
import type { MentionTable } from './mention-sql';
import { SqlRepository } from './sql-engine';

/**
 * Keeps a summary whose inputs hash (first parameter) is unchanged; otherwise writes the plain
 * concatenation (second) and marks it pending (third: the hash again) for the graph writer to
 * summarise and embed. summary_hash must be assigned after this: MySQL assigns left to right.
 */
export const CHANGED_SUMMARY = `description = CASE WHEN summary_hash = ? THEN description ELSE ? END,
  summary_pending = CASE WHEN summary_hash = ? THEN summary_pending ELSE 1 END`;

/** The summaries the graph writer recomputes: those whose mentions changed, and their saving. */
export class SqlGraphSummaries extends SqlRepository implements GraphSummaryRepository {
  async listPendingSummaries(scope: KbScope, limit: number): Promise<PendingSummary[]> {
    const params = [scope.tenantId, scope.kbId];
    // An integer literal: not every server accepts a bound LIMIT.
    const top = Math.max(0, Math.floor(limit));
    const entities = await this.db.rows(`SELECT id, name, type, summary_hash FROM entities WHERE tenant_id = ? AND kb_id = ? AND summary_pending = 1 ORDER BY id LIMIT ${top}`, params);
    const relationships = await this.db.rows(
      `SELECT r.id, r.label, r.summary_hash, s.name AS source_name, s.type AS source_type, t.name AS target_name, t.type AS target_type FROM relationships r
       JOIN entities s ON s.tenant_id = r.tenant_id AND s.kb_id = r.kb_id AND s.id = r.source_id
       JOIN entities t ON t.tenant_id = r.tenant_id AND t.kb_id = r.kb_id AND t.id = r.target_id
       WHERE r.tenant_id = ? AND r.kb_id = ? AND r.summary_pending = 1 ORDER BY r.id LIMIT ${top}`,
      params,
    );
    // The descriptions their rows were derived from (the first mentions of each).
    const descriptions = (table: MentionTable, rows: Row[]) => sampledMentionsOf(this.db, scope, table, 'description', rows.map((r) => String(r.id)));
    const byKind = { entity: await descriptions('entity_mentions', entities), relationship: await descriptions('relationship_mentions', relationships) };
    return toPendingSummaries(entities, relationships, (kind, id) => (byKind[kind].get(id)?.rows ?? []).map((m) => String(m.description)));
  }

  async listScopesWithPendingSummaries(): Promise<KbScope[]> {
    const rows = await this.db.rows(
      'SELECT tenant_id, kb_id FROM entities WHERE summary_pending = 1 UNION SELECT tenant_id, kb_id FROM relationships WHERE summary_pending = 1 ORDER BY 1, 2',
    );
    return rows.map((r) => ({ tenantId: String(r.tenant_id), kbId: String(r.kb_id) }));
  }

  /**
   * One compare-and-set update per row (a summary computed from mentions that changed since is
   * dropped), all in one transaction: a refresh saves up to a page of entities and one of
   * relationships, and as statements of their own each paid a commit (on SQLite, a WAL append of
   * every page it touched) — more than the update itself. The rows are taken in the graph
   * writes' lock order: entities by id, relationships by id, then their community change records.
   */
  async saveSummaries(scope: KbScope, updates: readonly SummaryUpdate[]): Promise<number> {
    if (updates.length === 0) return 0;
    const d = this.dialect;
    const byId = (a: SummaryUpdate, b: SummaryUpdate) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const entities = updates.filter((u) => u.kind === 'entity').sort(byId);
    const relationships = updates.filter((u) => u.kind === 'relationship').sort(byId);
    // Descriptions and embeddings only: the graph's structure is as it was.
    return this.changing(scope, ['entities', 'relationships'], () =>
      this.db.transaction(async (tx) => {
        let saved = 0;
        for (const u of [...entities, ...relationships]) {
          const table = u.kind === 'entity' ? 'entities' : 'relationships';
          // A description the user set by hand (graph_overlays) wins over the derived summary.
          saved += await tx.exec(
            `UPDATE ${table} SET description = COALESCE((SELECT o.description FROM graph_overlays o
               WHERE o.tenant_id = ? AND o.kb_id = ? AND o.target_kind = ? AND o.target_id = ?), ?),
             embedding = ?, summary_pending = 0 WHERE ${d.byIdScope()} AND id = ? AND summary_hash = ?`,
            [scope.tenantId, scope.kbId, u.kind, u.id, u.description, d.embeddingValue(u.embedding), scope.tenantId, scope.kbId, u.id, u.summaryHash],
          );
        }
        // In the same transaction as the summaries, so no saved summary goes unrecorded.
        await recordEntityChanges(tx, d, scope, entities.map((u) => u.id));
        await recordRelationshipChanges(tx, d, scope, relationships.map((u) => u.id));
        return saved;
      }),
      false,
    );
  }
}
