import type { KbScope } from '@trellis/contracts';
import { fullTextTerms, rankEntitiesByName } from '../derivation';
import type { EntityRecord, RelationshipRecord } from '../records';
import type { SqlSession } from '../sql/sql-session';
import { ENTITY_COLUMNS, RELATIONSHIP_SELECT, batches, marks, toEntity, toRelationship } from './mysql-rows';

/** Graph reads; every query is bound to the scope's tenant and knowledge base. */

/** In the order of `ids`, skipping ids that do not exist. */
export async function getEntities(session: SqlSession, scope: KbScope, ids: readonly string[]): Promise<EntityRecord[]> {
  const byId = new Map<string, EntityRecord>();
  for (const batch of batches(ids)) {
    const rows = await session.rows(`SELECT ${ENTITY_COLUMNS} FROM entities WHERE tenant_id = ? AND kb_id = ? AND id IN (${marks(batch)})`, [
      scope.tenantId,
      scope.kbId,
      ...batch,
    ]);
    for (const row of rows) byId.set(String(row.id), toEntity(row));
  }
  return ids.map((id) => byId.get(id)).filter((e): e is EntityRecord => e !== undefined);
}

export async function findEntitiesByNormalizedName(session: SqlSession, scope: KbScope, normalizedName: string): Promise<EntityRecord[]> {
  const rows = await session.rows(`SELECT ${ENTITY_COLUMNS} FROM entities WHERE tenant_id = ? AND kb_id = ? AND normalized_name = ?`, [
    scope.tenantId,
    scope.kbId,
    normalizedName,
  ]);
  return rows.map(toEntity);
}

/** Same candidates as the SQLite adapter, ranked by rankEntitiesByName. */
export async function searchEntitiesByName(session: SqlSession, scope: KbScope, query: string, limit: number): Promise<EntityRecord[]> {
  const words = fullTextTerms(query);
  if (words.length === 0) return [];
  // '!' as the LIKE escape: unlike '\', it means the same whatever the server's sql_mode.
  const conditions = words.map(() => `normalized_name LIKE ? ESCAPE '!'`).join(' OR ');
  const rows = await session.rows(`SELECT ${ENTITY_COLUMNS} FROM entities WHERE tenant_id = ? AND kb_id = ? AND (${conditions}) LIMIT 2000`, [
    scope.tenantId,
    scope.kbId,
    ...words.map((w) => `%${w.replace(/[!%_]/g, (c) => `!${c}`)}%`),
  ]);
  return rankEntitiesByName(words, rows.map(toEntity), limit);
}

export async function getRelationships(session: SqlSession, scope: KbScope, ids: readonly string[]): Promise<RelationshipRecord[]> {
  const out: RelationshipRecord[] = [];
  for (const batch of batches(ids)) {
    const rows = await session.rows(`${RELATIONSHIP_SELECT} WHERE r.tenant_id = ? AND r.kb_id = ? AND r.id IN (${marks(batch)})`, [
      scope.tenantId,
      scope.kbId,
      ...batch,
    ]);
    out.push(...rows.map(toRelationship));
  }
  return out;
}

export async function relationshipsOfEntities(session: SqlSession, scope: KbScope, entityIds: readonly string[]): Promise<RelationshipRecord[]> {
  const seen = new Map<string, RelationshipRecord>();
  for (const batch of batches(entityIds)) {
    const rows = await session.rows(
      `${RELATIONSHIP_SELECT} WHERE r.tenant_id = ? AND r.kb_id = ? AND (r.source_id IN (${marks(batch)}) OR r.target_id IN (${marks(batch)})) ORDER BY r.id`,
      [scope.tenantId, scope.kbId, ...batch, ...batch],
    );
    for (const row of rows) seen.set(String(row.id), toRelationship(row));
  }
  return [...seen.values()];
}

/** Chunk ids mentioning each owner, in chunk id order. */
export async function chunkIdsByOwner(
  session: SqlSession,
  scope: KbScope,
  table: 'entity_mentions' | 'relationship_mentions',
  ownerColumn: 'entity_id' | 'relationship_id',
  ownerIds: readonly string[],
): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>();
  for (const batch of batches(ownerIds)) {
    const rows = await session.rows(
      `SELECT ${ownerColumn} AS owner, chunk_id FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND ${ownerColumn} IN (${marks(batch)}) ORDER BY chunk_id`,
      [scope.tenantId, scope.kbId, ...batch],
    );
    for (const row of rows) {
      const owner = String(row.owner);
      const list = result.get(owner) ?? [];
      list.push(String(row.chunk_id));
      result.set(owner, list);
    }
  }
  return result;
}

export async function exportGraph(session: SqlSession, scope: KbScope): Promise<{ entities: EntityRecord[]; relationships: RelationshipRecord[] }> {
  const params = [scope.tenantId, scope.kbId];
  const entities = (await session.rows(`SELECT ${ENTITY_COLUMNS} FROM entities WHERE tenant_id = ? AND kb_id = ? ORDER BY normalized_name, id`, params)).map(toEntity);
  const relationships = (await session.rows(`${RELATIONSHIP_SELECT} WHERE r.tenant_id = ? AND r.kb_id = ? ORDER BY r.id`, params)).map(toRelationship);
  return { entities, relationships };
}
