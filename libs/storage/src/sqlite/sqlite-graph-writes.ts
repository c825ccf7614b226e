import type Database from 'better-sqlite3';
import type { KbScope } from '@trellis/contracts';
import { preferredName, summarizeDescriptions, summaryInputsHash } from '../derivation';
import type { EntityMentionWrite, RelationshipMentionWrite } from '../records';
import { vectorToBuffer } from '../vector-math';
import type { Touched } from '../graph-overlay';
import type { SqliteGraphOverlay } from './sqlite-graph-overlay';
import { inBatches, marks } from './sqlite-rows';
import { CHANGED_SUMMARY } from '../sql/summary-sql';


/**
 * How the standalone store turns chunk extractions into the graph: mentions are the facts,
 * entity and relationship rows are derived from them (and from the user's overlay). Every
 * method runs inside the caller's transaction.
 */
export class SqliteGraphWrites {
  constructor(
    private readonly db: Database.Database,
    private readonly overlay: SqliteGraphOverlay,
  ) {}

  /**
   * One chunk's write, inside the caller's transaction. Manual edits rewrite it first
   * (tombstones, merges); `replay` is set when an edit or its undo re-applies recorded writes.
   */
  writeChunk(
    scope: KbScope,
    chunkId: string,
    written: readonly EntityMentionWrite[],
    writtenRelationships: readonly RelationshipMentionWrite[],
    replay: boolean,
  ): void {
    // A chunk deleted meanwhile (document replaced or removed) must not gain facts.
    if (this.db.prepare('SELECT 1 FROM chunks WHERE id = ? AND tenant_id = ? AND kb_id = ?').get(chunkId, scope.tenantId, scope.kbId) === undefined) return;
    const insertEntity = this.db.prepare(
      `INSERT INTO entities (id, tenant_id, kb_id, name, normalized_name, type, embedding) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO NOTHING`,
    );
    const insertEntityMention = this.db.prepare(
      `INSERT INTO entity_mentions (entity_id, chunk_id, tenant_id, kb_id, description, name, needs_review) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (entity_id, chunk_id) DO UPDATE SET description = excluded.description, name = excluded.name, needs_review = excluded.needs_review`,
    );
    const insertRelationship = this.db.prepare(
      `INSERT INTO relationships (id, tenant_id, kb_id, source_id, target_id, label, embedding) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO NOTHING`,
    );
    const insertRelationshipMention = this.db.prepare(
      `INSERT INTO relationship_mentions (relationship_id, chunk_id, tenant_id, kb_id, description, strength) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (relationship_id, chunk_id) DO UPDATE SET description = excluded.description, strength = excluded.strength`,
    );
    const { entities, relationships } = this.overlay.rewrite(scope, chunkId, written, writtenRelationships, replay);
    const touched = this.detachChunks([chunkId]);
    for (const e of entities) {
      // A mention a merge redirected carries no name; the row then takes the normalised one.
      insertEntity.run(e.entityId, scope.tenantId, scope.kbId, e.name || e.normalizedName, e.normalizedName, e.type, vectorToBuffer(e.embedding));
      insertEntityMention.run(e.entityId, chunkId, scope.tenantId, scope.kbId, e.description, e.name, e.needsReview === true ? 1 : 0);
      touched.entityIds.add(e.entityId);
    }
    for (const r of relationships) {
      insertRelationship.run(r.relationshipId, scope.tenantId, scope.kbId, r.sourceId, r.targetId, r.label, vectorToBuffer(r.embedding));
      insertRelationshipMention.run(r.relationshipId, chunkId, scope.tenantId, scope.kbId, r.description, r.strength);
      touched.relationshipIds.add(r.relationshipId);
    }
    this.refreshDerived(scope, touched);
  }

  /** Removes the mentions of these chunks and returns what they touched. */
  detachChunks(chunkIds: readonly string[]): Touched {
    const entityIds = new Set<string>();
    const relationshipIds = new Set<string>();
    inBatches(chunkIds, (batch) => {
      for (const id of this.db.prepare(`SELECT entity_id FROM entity_mentions WHERE chunk_id IN (${marks(batch)})`).pluck().all(...batch) as string[]) entityIds.add(id);
      for (const id of this.db.prepare(`SELECT relationship_id FROM relationship_mentions WHERE chunk_id IN (${marks(batch)})`).pluck().all(...batch) as string[]) relationshipIds.add(id);
      this.db.prepare(`DELETE FROM entity_mentions WHERE chunk_id IN (${marks(batch)})`).run(...batch);
      this.db.prepare(`DELETE FROM relationship_mentions WHERE chunk_id IN (${marks(batch)})`).run(...batch);
    });
    return { entityIds, relationshipIds };
  }

  /**
   * Recomputes counts, weights, names and review flags from the mentions that remain; deletes
   * what has none left (manual ones stay: they never had any), and relationships whose end
   * entity is gone; then re-applies the user's overrides. A summary is rewritten (as the plain
   * concatenation) only when its inputs changed, and then marked pending so the graph writer
   * summarises and embeds it again (see listPendingSummaries).
   */
  refreshDerived(scope: KbScope, touched: Touched): void {
    const relationshipMentions = this.db.prepare('SELECT description, strength FROM relationship_mentions WHERE relationship_id = ? ORDER BY chunk_id');
    const updateRelationship = this.db.prepare(
      `UPDATE relationships SET ${CHANGED_SUMMARY}, weight = ?, mention_count = ?, summary_hash = ? WHERE id = ?`,
    );
    const deleteRelationship = this.db.prepare("DELETE FROM relationships WHERE id = ? AND kind = 'extracted'");
    for (const id of touched.relationshipIds) {
      const mentions = relationshipMentions.all(id) as Array<{ description: string; strength: number }>;
      if (mentions.length === 0) {
        deleteRelationship.run(id);
        continue;
      }
      const weight = mentions.reduce((sum, m) => sum + m.strength, 0);
      const descriptions = mentions.map((m) => m.description);
      const hash = summaryInputsHash('', descriptions);
      updateRelationship.run(hash, summarizeDescriptions(descriptions), hash, weight, mentions.length, hash, id);
    }
    const entityMentions = this.db.prepare('SELECT description, name, needs_review FROM entity_mentions WHERE entity_id = ? ORDER BY chunk_id');
    const updateEntity = this.db.prepare(
      `UPDATE entities SET ${CHANGED_SUMMARY}, mention_count = ?, name = COALESCE(NULLIF(?, ''), name), needs_review = ?, summary_hash = ? WHERE id = ?`,
    );
    const deleteEntity = this.db.prepare("DELETE FROM entities WHERE id = ? AND kind = 'extracted'");
    const danglingIds = this.db.prepare('SELECT id FROM relationships WHERE source_id = ? OR target_id = ?').pluck();
    const deleteRelationshipMentions = this.db.prepare('DELETE FROM relationship_mentions WHERE relationship_id = ?');
    const deleteDangling = this.db.prepare('DELETE FROM relationships WHERE id = ?');
    for (const id of touched.entityIds) {
      const mentions = entityMentions.all(id) as Array<{ description: string; name: string; needs_review: number }>;
      if (mentions.length === 0) {
        if (deleteEntity.run(id).changes === 0) continue;
        for (const relationshipId of danglingIds.all(id, id) as string[]) {
          deleteRelationshipMentions.run(relationshipId);
          deleteDangling.run(relationshipId);
        }
        continue;
      }
      const name = preferredName(mentions.map((m) => m.name));
      const descriptions = mentions.map((m) => m.description);
      const hash = summaryInputsHash(name, descriptions);
      const needsReview = mentions.every((m) => m.needs_review === 1) ? 1 : 0;
      updateEntity.run(hash, summarizeDescriptions(descriptions), hash, mentions.length, name, needsReview, hash, id);
    }
    this.overlay.applyOverrides(scope, touched);
  }
}
