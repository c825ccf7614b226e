import type { KbScope } from '@trellis/contracts';
import { deriveEntity, deriveRelationship } from '@trellis/graph';
import type { EntityMentionWrite, RelationshipMentionWrite, Touched } from '@trellis/graph';
import type { EntityCandidate } from '../records';
import type { ChunkGraphWrite, GraphWriteRepository } from '../repositories/graph-write.repository';
import { ENTITY_COLUMNS, batches, compareIds, toEntity } from '../row-mappers';
import type { Row } from '../row-mappers';
import { applyOverrides, rewriteChunk } from './graph-overlay-sql';
import type { SqlDialect } from './sql-dialect';
import { takeInserted } from './sql-dialect';
import { SqlRepository } from './sql-engine';
import type { SqlEngine } from './sql-engine';
import { execWhereIn, rowsWhereIn } from './sql-session';
import type { SqlSession, SqlValue } from './sql-session';
import { describedEntity, sampledMentionsOf } from './mention-sql';
import { recordEntityChanges } from './community-change-sql';
import { CHANGED_SUMMARY } from './summary-sql';
import { syncEntityNameTerms } from './entity-name-terms-sql';

/**
 * The graph writes: mentions are the facts, entity and relationship rows are derived from them
 * (and from the user's overlay). Everything runs inside the caller's transaction.
 *
 * Concurrency rule where transactions run at once (MySQL family): a transaction locks every
 * entity and relationship row whose mentions it changes BEFORE changing them and keeps the locks
 * until commit, so summaries and counts recomputed from the mentions are never computed from a
 * stale view. Locks are always taken in the same order (chunk rows, then entities, then
 * relationships, each by id) to keep deadlocks rare; the transaction runner retries the ones
 * that still happen. SQLite runs one transaction at a time and locks nothing.
 */

/** Writing chunk extractions into the graph, and the reads the graph writer resolves mentions with. */
export class SqlGraphWrites extends SqlRepository implements GraphWriteRepository {
  async applyChunkExtraction(
    scope: KbScope,
    chunkId: string,
    entities: readonly EntityMentionWrite[],
    relationships: readonly RelationshipMentionWrite[],
    newEntityIds: ReadonlySet<string> = new Set(),
  ): Promise<ChunkGraphWrite> {
    try {
      const write = (tx: SqlSession) => writeChunkExtraction(tx, this.dialect, scope, chunkId, entities, relationships, false, newEntityIds);
      return (await this.changing(scope, ['entities', 'relationships'], () => this.db.transaction(write))) ? 'written' : 'no-chunk';
    } catch (error) {
      if (error instanceof EntityTaken) return 'entity-taken';
      throw error;
    }
  }

  async listEntityCandidates(scope: KbScope, normalizedNames: readonly string[]): Promise<EntityCandidate[]> {
    const sql = (m: string) => `SELECT ${ENTITY_COLUMNS}, embedding FROM entities WHERE tenant_id = ? AND kb_id = ? AND normalized_name IN (${m})`;
    const rows = await rowsWhereIn(this.db, sql, [scope.tenantId, scope.kbId], [...new Set(normalizedNames)]);
    const out = rows.map((row) => ({ entity: toEntity(row), embedding: this.dialect.readEmbedding(row.embedding) ?? new Float32Array(0) }));
    return out.sort((a, b) => compareIds(a.entity.id, b.entity.id));
  }

  async entityMentionsOfSameContent(scope: KbScope, chunkId: string): Promise<Array<{ name: string; entityId: string }>> {
    const rows = await this.db.rows(
      `SELECT DISTINCT m.name, m.entity_id FROM chunks c
       JOIN chunks o ON o.tenant_id = c.tenant_id AND o.kb_id = c.kb_id AND o.content_hash = c.content_hash AND o.id <> c.id
       JOIN entity_mentions m ON m.tenant_id = o.tenant_id AND m.kb_id = o.kb_id AND m.chunk_id = o.id
       WHERE ${this.dialect.byIdScope('c')} AND c.id = ? ORDER BY m.entity_id, m.name`,
      [scope.tenantId, scope.kbId, chunkId],
    );
    return rows.map((r) => ({ name: String(r.name), entityId: String(r.entity_id) }));
  }

}

/** Thrown inside the transaction (rolling it back) when an entity meant to be new exists. */
class EntityTaken extends Error {}

/**
 * Replaces one chunk's mentions, after manual edits rewrote them (tombstones, merges);
 * `replay` is set when an edit or its undo re-applies recorded writes. Resolves false when the
 * chunk no longer exists; throws EntityTaken when one of `newEntityIds` exists already.
 */
export async function writeChunkExtraction(
  tx: SqlSession,
  dialect: SqlDialect,
  scope: KbScope,
  chunkId: string,
  extracted: readonly EntityMentionWrite[],
  extractedRelationships: readonly RelationshipMentionWrite[],
  replay = false,
  newEntityIds: ReadonlySet<string> = new Set(),
): Promise<boolean> {
  // Locking the chunk orders this write against a concurrent delete of the same chunk, which
  // would otherwise leave mentions of a chunk that is gone.
  const chunk = await tx.rows(`SELECT id FROM chunks WHERE ${dialect.byIdScope()} AND id = ?${dialect.forUpdate}`, [scope.tenantId, scope.kbId, chunkId]);
  if (chunk.length === 0) return false;
  const { entities, relationships } = await rewriteChunk(tx, dialect, scope, chunkId, extracted, extractedRelationships, replay);
  const touched = await mentionedBy(tx, scope, [chunkId]);

  // An entity the caller resolved as new is inserted only if absent. On the MySQL family the
  // insert waits for a concurrent writer's uncommitted row of the same id, and then inserts
  // nothing: the caller must resolve again. Every other entity is upserted: the no-op update
  // both creates a missing row and locks an existing one exclusively, so two writers of the same
  // entity meet on its primary key and end with one row, which keeps the first writer's name,
  // type and embedding.
  const entityRows = [...entities].sort((a, b) => compareIds(a.entityId, b.entityId));
  const created = entityRows.filter((e, i) => newEntityIds.has(e.entityId) && entityRows[i - 1]?.entityId !== e.entityId);
  const columns = '(tenant_id, kb_id, id, name, normalized_name, type, description, mention_count, embedding)';
  // A mention a merge redirected carries no name; a row it creates takes the normalised one.
  const values = (batch: readonly EntityMentionWrite[]) => batch.flatMap((e) => [scope.tenantId, scope.kbId, e.entityId, e.name || e.normalizedName, e.normalizedName, e.type, dialect.embeddingValue(e.embedding)]);
  const rowMarks = (batch: readonly EntityMentionWrite[]) => batch.map(() => "(?, ?, ?, ?, ?, ?, '', 0, ?)").join(', ');
  for (const batch of batches(created, 200)) {
    const inserted = await tx.exec(`${dialect.insertIgnore} INTO entities ${columns} VALUES ${rowMarks(batch)}`, values(batch));
    if (inserted < batch.length) throw new EntityTaken(`an entity of chunk ${chunkId} was created by another write`);
  }
  for (const batch of batches(entityRows.filter((e) => !newEntityIds.has(e.entityId)), 200)) {
    await tx.exec(`INSERT INTO entities ${columns} VALUES ${rowMarks(batch)} ${dialect.onConflictKeep('mention_count')}`, values(batch));
  }
  const written = new Set(entities.map((e) => e.entityId));
  await lockRows(tx, dialect, scope, 'entities', [...touched.entityIds].filter((id) => !written.has(id)));
  const relationshipRows = [...relationships].sort((a, b) => compareIds(a.relationshipId, b.relationshipId));
  for (const batch of batches(relationshipRows, 200)) {
    await tx.exec(
      `INSERT INTO relationships (tenant_id, kb_id, id, source_id, target_id, label, description, weight, mention_count, embedding)
       VALUES ${batch.map(() => "(?, ?, ?, ?, ?, ?, '', 0, 0, ?)").join(', ')} ${dialect.onConflictKeep('mention_count')}`,
      batch.flatMap((r) => [scope.tenantId, scope.kbId, r.relationshipId, r.sourceId, r.targetId, r.label, dialect.embeddingValue(r.embedding)]),
    );
  }
  const writtenRelationships = new Set(relationships.map((r) => r.relationshipId));
  await lockRows(tx, dialect, scope, 'relationships', [...touched.relationshipIds].filter((id) => !writtenRelationships.has(id)));

  await deleteByIds(tx, scope, 'entity_mentions', 'chunk_id', [chunkId]);
  await deleteByIds(tx, scope, 'relationship_mentions', 'chunk_id', [chunkId]);
  // Input order is kept, so a repeated id ends with its last description.
  for (const batch of batches(entities, 200)) {
    await tx.exec(
      `INSERT INTO entity_mentions (tenant_id, kb_id, entity_id, chunk_id, description, name, needs_review) VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}
       ${dialect.onConflictUpdate(takeInserted(dialect, ['description', 'name', 'needs_review']))}`,
      batch.flatMap((e) => [scope.tenantId, scope.kbId, e.entityId, chunkId, e.description, e.name, e.needsReview === true ? 1 : 0]),
    );
    for (const e of batch) touched.entityIds.add(e.entityId);
  }
  for (const batch of batches(relationships, 200)) {
    await tx.exec(
      `INSERT INTO relationship_mentions (tenant_id, kb_id, relationship_id, chunk_id, description, strength) VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}
       ${dialect.onConflictUpdate(takeInserted(dialect, ['description', 'strength']))}`,
      batch.flatMap((r) => [scope.tenantId, scope.kbId, r.relationshipId, chunkId, r.description, r.strength]),
    );
    for (const r of batch) touched.relationshipIds.add(r.relationshipId);
  }
  await refreshDerived(tx, dialect, scope, touched, [chunkId]);
  return true;
}

/**
 * Deletes chunks (locked rows with their fts_length), their full-text entries and the graph
 * facts only they supported; graph edits have nothing to replay for chunks that are gone.
 */
export async function removeChunks(tx: SqlSession, engine: SqlEngine, scope: KbScope, chunks: readonly Row[]): Promise<number> {
  if (chunks.length === 0) return 0;
  const lengths = new Map(chunks.map((r) => [String(r.id), Number(r.fts_length)]));
  const chunkIds = [...lengths.keys()];
  const touched = await mentionedBy(tx, scope, chunkIds);
  await lockRows(tx, engine.dialect, scope, 'entities', [...touched.entityIds]);
  await lockRows(tx, engine.dialect, scope, 'relationships', [...touched.relationshipIds]);
  for (const table of ['entity_mentions', 'relationship_mentions', 'graph_edit_chunks']) await deleteByIds(tx, scope, table, 'chunk_id', chunkIds);
  await deleteByIds(tx, scope, 'chunks', 'id', chunkIds, engine.dialect);
  await refreshDerived(tx, engine.dialect, scope, touched, chunkIds);
  // Last: the MySQL index's per-KB totals row is shared by every writer, so it is held shortest.
  await engine.fullText.remove(tx, scope, lengths);
  return chunkIds.length;
}

/** Deletes a document's chunks (all versions, or those below `belowVersion`) with removeChunks. */
export async function removeDocumentChunks(tx: SqlSession, engine: SqlEngine, scope: KbScope, documentId: string, belowVersion?: number): Promise<number> {
  const versionClause = belowVersion === undefined ? '' : 'AND version < ?';
  const params: SqlValue[] = [scope.tenantId, scope.kbId, documentId, ...(belowVersion === undefined ? [] : [belowVersion])];
  const sql = `SELECT id, fts_length FROM chunks WHERE tenant_id = ? AND kb_id = ? AND document_id = ? ${versionClause} ORDER BY id${engine.dialect.forUpdate}`;
  return removeChunks(tx, engine, scope, await tx.rows(sql, params));
}

/** The entities and relationships these chunks mention. */
async function mentionedBy(tx: SqlSession, scope: KbScope, chunkIds: readonly string[]): Promise<Touched> {
  const ids = async (table: string, column: string) => {
    const rows = await rowsWhereIn(tx, (m) => `SELECT ${column} AS id FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND chunk_id IN (${m})`, [scope.tenantId, scope.kbId], chunkIds);
    return new Set(rows.map((r) => String(r.id)));
  };
  return { entityIds: await ids('entity_mentions', 'entity_id'), relationshipIds: await ids('relationship_mentions', 'relationship_id') };
}

async function lockRows(tx: SqlSession, dialect: SqlDialect, scope: KbScope, table: 'entities' | 'relationships', ids: readonly string[]): Promise<void> {
  if (!dialect.locksRows) return;
  await rowsWhereIn(tx, (m) => `SELECT id FROM ${table} WHERE ${dialect.byIdScope()} AND id IN (${m}) ORDER BY id FOR UPDATE`, [scope.tenantId, scope.kbId], [...ids].sort(compareIds));
}

/**
 * Recomputes counts, weights, names and review flags from the mentions that remain (the rules
 * are @trellis/graph's deriveEntity / deriveRelationship); deletes
 * what has none left (manual rows stay: they never had any), then relationships whose end
 * entity is gone, with their mentions, so nothing dangles; then re-applies the user's
 * overrides and brings the touched entities' name terms in line. A summary is rewritten only when its inputs changed, and marked pending for the
 * graph writer to summarise and embed. `changedChunks`, when only their mentions changed, spare
 * the reads of the hubs none of them reaches in its first mentions (sampledMentionsOf).
 */
export async function refreshDerived(tx: SqlSession, dialect: SqlDialect, scope: KbScope, touched: Touched, changedChunks?: readonly string[]): Promise<void> {
  const byId = `WHERE ${dialect.byIdScope()} AND id = ?`;
  // What communities must look at again: the touched entities and both ends of every touched
  // relationship (read now, before a relationship without mentions is deleted), recorded once
  // at the end, in id order, like every other lock this transaction takes.
  const changed = new Set(touched.entityIds);
  const ends = await rowsWhereIn(tx, (m) => `SELECT source_id, target_id FROM relationships WHERE ${dialect.byIdScope()} AND id IN (${m})`, [scope.tenantId, scope.kbId], [
    ...touched.relationshipIds,
  ]);
  for (const r of ends) changed.add(String(r.source_id)).add(String(r.target_id));
  const relationshipMentions = await sampledMentionsOf(tx, scope, 'relationship_mentions', 'description, strength', touched.relationshipIds, { sum: 'strength', changedChunks });
  const goneRelationships: string[] = [];
  for (const id of [...touched.relationshipIds].sort(compareIds)) {
    const sampled = relationshipMentions.get(id);
    if (sampled === undefined) {
      goneRelationships.push(id);
      continue;
    }
    if (sampled.rows === undefined) {
      await tx.exec(`UPDATE relationships SET weight = ?, mention_count = ? ${byId}`, [sampled.total, sampled.count, scope.tenantId, scope.kbId, id]);
      continue;
    }
    const mentions = sampled.rows.map((m) => ({ description: String(m.description), strength: Number(m.strength) }));
    const d = deriveRelationship(mentions, { mentionCount: sampled.count, weight: sampled.total });
    await tx.exec(`UPDATE relationships SET ${CHANGED_SUMMARY}, weight = ?, mention_count = ?, summary_hash = ? ${byId}`, [
      d.summaryHash,
      d.summary,
      d.summaryHash,
      d.weight,
      d.mentionCount,
      d.summaryHash,
      scope.tenantId,
      scope.kbId,
      id,
    ]);
  }
  await deleteByIds(tx, scope, 'relationships', 'id', await extractedOnly(tx, dialect, scope, 'relationships', goneRelationships), dialect);

  const entityMentions = await sampledMentionsOf(tx, scope, 'entity_mentions', 'description, name, needs_review', touched.entityIds, { changedChunks });
  const goneEntities: string[] = [];
  for (const id of [...touched.entityIds].sort(compareIds)) {
    const sampled = entityMentions.get(id);
    if (sampled === undefined) {
      goneEntities.push(id);
      continue;
    }
    if (sampled.rows === undefined) {
      const needsReview = !(await describedEntity(tx, scope, id));
      await tx.exec(`UPDATE entities SET mention_count = ?, needs_review = ? ${byId}`, [sampled.count, needsReview ? 1 : 0, scope.tenantId, scope.kbId, id]);
      continue;
    }
    const mentions = sampled.rows.map((m) => ({ name: String(m.name), description: String(m.description), needsReview: Number(m.needs_review) === 1 }));
    // Flagged while no mention describes it: past its first mentions, one read says whether any other does.
    const needsReview = mentions.every((m) => m.needsReview) && (sampled.rows.length === sampled.count || !(await describedEntity(tx, scope, id)));
    const d = deriveEntity(mentions, { mentionCount: sampled.count, needsReview });
    await tx.exec(`UPDATE entities SET ${CHANGED_SUMMARY}, mention_count = ?, name = COALESCE(NULLIF(?, ''), name), needs_review = ?, summary_hash = ? ${byId}`, [
      d.summaryHash,
      d.summary,
      d.summaryHash,
      d.mentionCount,
      d.name,
      d.needsReview ? 1 : 0,
      d.summaryHash,
      scope.tenantId,
      scope.kbId,
      id,
    ]);
  }
  const deletedEntities = await extractedOnly(tx, dialect, scope, 'entities', goneEntities);
  await deleteByIds(tx, scope, 'entities', 'id', deletedEntities, dialect);

  const dangling = new Set<string>();
  // One read per end, each on its endpoint index: as one OR, SQLite (no statistics) read every
  // relationship of the knowledge base from one index's range on the scope.
  for (const end of ['source_id', 'target_id']) {
    const sql = (m: string) => `SELECT id, source_id, target_id FROM relationships WHERE tenant_id = ? AND kb_id = ? AND ${end} IN (${m}) ORDER BY id${dialect.forUpdate}`;
    for (const r of await rowsWhereIn(tx, sql, [scope.tenantId, scope.kbId], deletedEntities)) {
      dangling.add(String(r.id));
      // The entity at the other end lost a relationship: its communities changed too.
      changed.add(String(r.source_id)).add(String(r.target_id));
    }
  }
  await deleteByIds(tx, scope, 'relationship_mentions', 'relationship_id', [...dangling]);
  await deleteByIds(tx, scope, 'relationships', 'id', [...dangling], dialect);
  await applyOverrides(tx, dialect, scope, touched);
  await syncEntityNameTerms(tx, dialect, scope, touched.entityIds);
  await recordEntityChanges(tx, dialect, scope, changed);
}

/** The ids among these whose rows were derived from mentions (not created by hand). */
async function extractedOnly(tx: SqlSession, dialect: SqlDialect, scope: KbScope, table: 'entities' | 'relationships', ids: readonly string[]): Promise<string[]> {
  const sql = (m: string) => `SELECT id FROM ${table} WHERE ${dialect.byIdScope()} AND kind = 'manual' AND id IN (${m})`;
  const manual = new Set((await rowsWhereIn(tx, sql, [scope.tenantId, scope.kbId], ids)).map((r) => String(r.id)));
  return ids.filter((id) => !manual.has(id));
}

/** `dialect` marks a lookup by primary key (see SqlDialect.byIdScope). */
async function deleteByIds(tx: SqlSession, scope: KbScope, table: string, column: string, ids: readonly string[], dialect?: SqlDialect): Promise<void> {
  const where = dialect ? dialect.byIdScope() : 'tenant_id = ? AND kb_id = ?';
  await execWhereIn(tx, (m) => `DELETE FROM ${table} WHERE ${where} AND ${column} IN (${m})`, [scope.tenantId, scope.kbId], ids);
}
