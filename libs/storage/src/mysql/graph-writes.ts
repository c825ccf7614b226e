import type { KbScope } from '@trellis/contracts';
import { preferredName, summarizeDescriptions, summaryInputsHash } from '../derivation';
import type { EntityMentionWrite, RelationshipMentionWrite } from '../records';
import type { SqlSession, SqlValue } from '../sql/sql-session';
import { batches, marks } from './mysql-rows';
import { unindexChunkTexts } from './fulltext-index';
import type { VectorSql } from './vector-sql';
import { applyOverrides, rewriteChunk } from './graph-overlay-sql';
import type { Touched } from '../graph-overlay';
import { CHANGED_SUMMARY } from '../sql/summary-sql';

/**
 * The graph writes, run inside the caller's transaction. Concurrency rule: a transaction locks
 * every entity and relationship row whose mentions it changes BEFORE changing them and keeps
 * the locks until commit, so summaries and counts recomputed from the mentions are never
 * computed from a stale view. Locks are always taken in the same order (chunk rows, then
 * entities, then relationships, each by id) to keep deadlocks rare; the transaction runner
 * retries the ones that still happen.
 */

/** Code-unit order, which for our ASCII ids is the binary collation's order: the lock order. */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}


/**
 * Replaces one chunk's mentions, after manual edits rewrote them (tombstones, merges);
 * `replay` is set when an edit or its undo re-applies recorded writes. Resolves false when the
 * chunk no longer exists.
 */
export async function writeChunkExtraction(
  tx: SqlSession,
  vectors: VectorSql,
  scope: KbScope,
  chunkId: string,
  extracted: readonly EntityMentionWrite[],
  extractedRelationships: readonly RelationshipMentionWrite[],
  replay = false,
): Promise<boolean> {
  // Locking the chunk orders this write against a concurrent delete of the same chunk, which
  // would otherwise leave mentions of a chunk that is gone.
  const chunk = await tx.rows('SELECT id FROM chunks WHERE tenant_id = ? AND kb_id = ? AND id = ? FOR UPDATE', [scope.tenantId, scope.kbId, chunkId]);
  if (chunk.length === 0) return false;
  const { entities, relationships } = await rewriteChunk(tx, scope, chunkId, extracted, extractedRelationships, replay);
  const touched = await mentionedBy(tx, scope, [chunkId]);

  // INSERT ... ON DUPLICATE KEY UPDATE both creates a missing row and locks an existing one
  // exclusively, so two writers of the same entity meet on its primary key and end with one
  // row. The no-op update keeps the first writer's name, type and embedding, as in SQLite.
  const entityRows = [...entities].sort((a, b) => compareIds(a.entityId, b.entityId));
  for (const batch of batches(entityRows, 200)) {
    await tx.exec(
      `INSERT INTO entities (tenant_id, kb_id, id, name, normalized_name, type, description, mention_count, embedding)
       VALUES ${batch.map(() => "(?, ?, ?, ?, ?, ?, '', 0, ?)").join(', ')} ON DUPLICATE KEY UPDATE mention_count = mention_count`,
      // A mention a merge redirected carries no name; a row it creates takes the normalised one.
      batch.flatMap((e) => [scope.tenantId, scope.kbId, e.entityId, e.name || e.normalizedName, e.normalizedName, e.type, vectors.embeddingValue(e.embedding)]),
    );
  }
  const written = new Set(entities.map((e) => e.entityId));
  await lockRows(tx, scope, 'entities', [...touched.entityIds].filter((id) => !written.has(id)));
  const relationshipRows = [...relationships].sort((a, b) => compareIds(a.relationshipId, b.relationshipId));
  for (const batch of batches(relationshipRows, 200)) {
    await tx.exec(
      `INSERT INTO relationships (tenant_id, kb_id, id, source_id, target_id, label, description, weight, mention_count, embedding)
       VALUES ${batch.map(() => "(?, ?, ?, ?, ?, ?, '', 0, 0, ?)").join(', ')} ON DUPLICATE KEY UPDATE mention_count = mention_count`,
      batch.flatMap((r) => [scope.tenantId, scope.kbId, r.relationshipId, r.sourceId, r.targetId, r.label, vectors.embeddingValue(r.embedding)]),
    );
  }
  const writtenRelationships = new Set(relationships.map((r) => r.relationshipId));
  await lockRows(tx, scope, 'relationships', [...touched.relationshipIds].filter((id) => !writtenRelationships.has(id)));

  await deleteMentionsOfChunks(tx, scope, [chunkId]);
  // Input order is kept, so a repeated id ends with its last description, as in SQLite.
  for (const batch of batches(entities, 200)) {
    await tx.exec(
      `INSERT INTO entity_mentions (tenant_id, kb_id, entity_id, chunk_id, description, name, needs_review) VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}
       ON DUPLICATE KEY UPDATE description = VALUES(description), name = VALUES(name), needs_review = VALUES(needs_review)`,
      batch.flatMap((e) => [scope.tenantId, scope.kbId, e.entityId, chunkId, e.description, e.name, e.needsReview === true ? 1 : 0]),
    );
    for (const e of batch) touched.entityIds.add(e.entityId);
  }
  for (const batch of batches(relationships, 200)) {
    await tx.exec(
      `INSERT INTO relationship_mentions (tenant_id, kb_id, relationship_id, chunk_id, description, strength) VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}
       ON DUPLICATE KEY UPDATE description = VALUES(description), strength = VALUES(strength)`,
      batch.flatMap((r) => [scope.tenantId, scope.kbId, r.relationshipId, chunkId, r.description, r.strength]),
    );
    for (const r of batch) touched.relationshipIds.add(r.relationshipId);
  }
  await refreshDerived(tx, scope, touched);
  return true;
}

/**
 * Deletes a document's chunks (all versions, or those below `belowVersion`), their postings,
 * and the graph facts only they supported. Resolves to the number of chunks removed.
 */
export async function removeDocumentChunks(tx: SqlSession, scope: KbScope, documentId: string, belowVersion?: number): Promise<number> {
  const versionClause = belowVersion === undefined ? '' : 'AND version < ?';
  const params: SqlValue[] = [scope.tenantId, scope.kbId, documentId, ...(belowVersion === undefined ? [] : [belowVersion])];
  const rows = await tx.rows(`SELECT id, fts_length FROM chunks WHERE tenant_id = ? AND kb_id = ? AND document_id = ? ${versionClause} ORDER BY id FOR UPDATE`, params);
  if (rows.length === 0) return 0;
  const lengths = new Map(rows.map((r) => [String(r.id), Number(r.fts_length)]));
  const chunkIds = [...lengths.keys()];
  const touched = await mentionedBy(tx, scope, chunkIds);
  await lockRows(tx, scope, 'entities', [...touched.entityIds]);
  await lockRows(tx, scope, 'relationships', [...touched.relationshipIds]);
  await deleteMentionsOfChunks(tx, scope, chunkIds);
  for (const batch of batches(chunkIds)) {
    await tx.exec(`DELETE FROM chunks WHERE tenant_id = ? AND kb_id = ? AND id IN (${marks(batch)})`, [scope.tenantId, scope.kbId, ...batch]);
    // Graph edits have nothing to replay for chunks that are gone.
    await tx.exec(`DELETE FROM graph_edit_chunks WHERE tenant_id = ? AND kb_id = ? AND chunk_id IN (${marks(batch)})`, [scope.tenantId, scope.kbId, ...batch]);
  }
  await refreshDerived(tx, scope, touched);
  await unindexChunkTexts(tx, scope, lengths);
  return chunkIds.length;
}

/** The entities and relationships these chunks mention. */
async function mentionedBy(tx: SqlSession, scope: KbScope, chunkIds: readonly string[]): Promise<Touched> {
  const touched: Touched = { entityIds: new Set(), relationshipIds: new Set() };
  for (const batch of batches(chunkIds)) {
    const params = [scope.tenantId, scope.kbId, ...batch];
    for (const r of await tx.rows(`SELECT entity_id FROM entity_mentions WHERE tenant_id = ? AND kb_id = ? AND chunk_id IN (${marks(batch)})`, params)) {
      touched.entityIds.add(String(r.entity_id));
    }
    for (const r of await tx.rows(`SELECT relationship_id FROM relationship_mentions WHERE tenant_id = ? AND kb_id = ? AND chunk_id IN (${marks(batch)})`, params)) {
      touched.relationshipIds.add(String(r.relationship_id));
    }
  }
  return touched;
}

async function deleteMentionsOfChunks(tx: SqlSession, scope: KbScope, chunkIds: readonly string[]): Promise<void> {
  for (const batch of batches(chunkIds)) {
    const params = [scope.tenantId, scope.kbId, ...batch];
    await tx.exec(`DELETE FROM entity_mentions WHERE tenant_id = ? AND kb_id = ? AND chunk_id IN (${marks(batch)})`, params);
    await tx.exec(`DELETE FROM relationship_mentions WHERE tenant_id = ? AND kb_id = ? AND chunk_id IN (${marks(batch)})`, params);
  }
}

async function lockRows(tx: SqlSession, scope: KbScope, table: 'entities' | 'relationships', ids: readonly string[]): Promise<void> {
  for (const batch of batches([...ids].sort(compareIds))) {
    await tx.rows(`SELECT id FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND id IN (${marks(batch)}) ORDER BY id FOR UPDATE`, [
      scope.tenantId,
      scope.kbId,
      ...batch,
    ]);
  }
}

/**
 * Recomputes counts, weights, names and review flags from the mentions that remain; deletes
 * what has none left (manual rows stay: they never had any), then relationships whose end
 * entity is gone, with their mentions, so nothing dangles; then re-applies the user's
 * overrides. A summary is rewritten only when its inputs changed, and marked pending for the
 * graph writer to summarise and embed.
 */
export async function refreshDerived(tx: SqlSession, scope: KbScope, touched: Touched): Promise<void> {
  const relationshipMentions = await mentionsOf(tx, scope, 'relationship_mentions', 'relationship_id', 'description, strength', touched.relationshipIds);
  const goneRelationships: string[] = [];
  for (const id of [...touched.relationshipIds].sort(compareIds)) {
    const mentions = relationshipMentions.get(id) ?? [];
    if (mentions.length === 0) {
      goneRelationships.push(id);
      continue;
    }
    const weight = mentions.reduce((sum, m) => sum + Number(m.strength), 0);
    const descriptions = mentions.map((m) => String(m.description));
    const hash = summaryInputsHash('', descriptions);
    await tx.exec(`UPDATE relationships SET ${CHANGED_SUMMARY}, weight = ?, mention_count = ?, summary_hash = ? WHERE tenant_id = ? AND kb_id = ? AND id = ?`, [
      hash,
      summarizeDescriptions(descriptions),
      hash,
      weight,
      mentions.length,
      hash,
      scope.tenantId,
      scope.kbId,
      id,
    ]);
  }
  await deleteByIds(tx, scope, 'relationships', 'id', await extractedOnly(tx, scope, 'relationships', goneRelationships));

  const entityMentions = await mentionsOf(tx, scope, 'entity_mentions', 'entity_id', 'description, name, needs_review', touched.entityIds);
  const goneEntities: string[] = [];
  for (const id of [...touched.entityIds].sort(compareIds)) {
    const mentions = entityMentions.get(id) ?? [];
    if (mentions.length === 0) {
      goneEntities.push(id);
      continue;
    }
    const name = preferredName(mentions.map((m) => String(m.name)));
    const descriptions = mentions.map((m) => String(m.description));
    const hash = summaryInputsHash(name, descriptions);
    const needsReview = mentions.every((m) => Number(m.needs_review) === 1) ? 1 : 0;
    await tx.exec(
      `UPDATE entities SET ${CHANGED_SUMMARY}, mention_count = ?, name = COALESCE(NULLIF(?, ''), name), needs_review = ?, summary_hash = ?
       WHERE tenant_id = ? AND kb_id = ? AND id = ?`,
      [hash, summarizeDescriptions(descriptions), hash, mentions.length, name, needsReview, hash, scope.tenantId, scope.kbId, id],
    );
  }
  const deletedEntities = await extractedOnly(tx, scope, 'entities', goneEntities);
  await deleteByIds(tx, scope, 'entities', 'id', deletedEntities);

  const dangling: string[] = [];
  for (const batch of batches(deletedEntities)) {
    const rows = await tx.rows(
      `SELECT id FROM relationships WHERE tenant_id = ? AND kb_id = ? AND (source_id IN (${marks(batch)}) OR target_id IN (${marks(batch)})) ORDER BY id FOR UPDATE`,
      [scope.tenantId, scope.kbId, ...batch, ...batch],
    );
    for (const r of rows) dangling.push(String(r.id));
  }
  await deleteByIds(tx, scope, 'relationship_mentions', 'relationship_id', dangling);
  await deleteByIds(tx, scope, 'relationships', 'id', dangling);
  await applyOverrides(tx, scope, touched);
}

/** The ids among these whose rows were derived from mentions (not created by hand). */
async function extractedOnly(tx: SqlSession, scope: KbScope, table: 'entities' | 'relationships', ids: readonly string[]): Promise<string[]> {
  const manual = new Set<string>();
  for (const batch of batches(ids)) {
    const rows = await tx.rows(`SELECT id FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND kind = 'manual' AND id IN (${marks(batch)})`, [scope.tenantId, scope.kbId, ...batch]);
    for (const r of rows) manual.add(String(r.id));
  }
  return ids.filter((id) => !manual.has(id));
}

/** Mentions of each owner, in chunk id order (the order summaries are built in). */
async function mentionsOf(
  tx: SqlSession,
  scope: KbScope,
  table: 'entity_mentions' | 'relationship_mentions',
  ownerColumn: 'entity_id' | 'relationship_id',
  columns: string,
  ownerIds: ReadonlySet<string>,
): Promise<Map<string, Array<Record<string, unknown>>>> {
  const byOwner = new Map<string, Array<Record<string, unknown>>>();
  for (const batch of batches([...ownerIds])) {
    const rows = await tx.rows(
      `SELECT ${ownerColumn} AS owner, ${columns} FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND ${ownerColumn} IN (${marks(batch)}) ORDER BY ${ownerColumn}, chunk_id`,
      [scope.tenantId, scope.kbId, ...batch],
    );
    for (const row of rows) {
      const owner = String(row.owner);
      const list = byOwner.get(owner) ?? [];
      list.push(row);
      byOwner.set(owner, list);
    }
  }
  return byOwner;
}

async function deleteByIds(tx: SqlSession, scope: KbScope, table: string, column: string, ids: readonly string[]): Promise<void> {
  for (const batch of batches(ids)) {
    await tx.exec(`DELETE FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND ${column} IN (${marks(batch)})`, [scope.tenantId, scope.kbId, ...batch]);
  }
}
