import type Database from 'better-sqlite3';
import type { KbScope } from '@trellis/contracts';
import { fullTextTerms, rankEntitiesByName } from '../derivation';
import type { EntityRecord, RelationshipRecord, ScoredEntity, ScoredRelationship } from '../records';
import { toEntity, toRelationship } from '../row-mappers';
import type { Row } from '../row-mappers';
import { VectorIndex } from '../vector-index';
import type { VectorIndexCache } from '../vector-index';
import { bufferToVector } from '../vector-math';
import { ENTITY_COLUMNS, inBatches, marks } from './sqlite-rows';

const RELATIONSHIP_SELECT = `SELECT r.id, r.kb_id, r.source_id, r.target_id, s.name AS source_name, t.name AS target_name,
  r.label, r.description, r.weight, r.mention_count FROM relationships r
  JOIN entities s ON s.id = r.source_id JOIN entities t ON t.id = r.target_id`;

/**
 * Reads of the standalone store's graph: entities and relationships by id, name and vector,
 * their neighbourhoods and provenance. Vector searches use the store's in-memory indexes.
 */
export class SqliteGraphReads {
  constructor(
    private readonly db: Database.Database,
    private readonly vectors: VectorIndexCache,
  ) {}

  getEntities(scope: KbScope, ids: readonly string[]): EntityRecord[] {
    const rows = inBatches(ids, (batch) =>
      this.db.prepare(`SELECT ${ENTITY_COLUMNS} FROM entities WHERE +tenant_id = ? AND +kb_id = ? AND id IN (${marks(batch)})`).all(scope.tenantId, scope.kbId, ...batch) as Row[],
    );
    const byId = new Map(rows.map((r) => [String(r.id), toEntity(r)]));
    return ids.map((id) => byId.get(id)).filter((e): e is EntityRecord => e !== undefined);
  }

  findEntitiesByNormalizedName(scope: KbScope, normalizedName: string): EntityRecord[] {
    return (
      this.db.prepare(`SELECT ${ENTITY_COLUMNS} FROM entities WHERE tenant_id = ? AND kb_id = ? AND normalized_name = ?`).all(scope.tenantId, scope.kbId, normalizedName) as Row[]
    ).map(toEntity);
  }

  searchEntitiesByName(scope: KbScope, query: string, limit: number): EntityRecord[] {
    const words = fullTextTerms(query);
    if (words.length === 0) return [];
    const conditions = words.map(() => `normalized_name LIKE ? ESCAPE '\\'`).join(' OR ');
    const rows = this.db
      .prepare(`SELECT ${ENTITY_COLUMNS} FROM entities WHERE tenant_id = ? AND kb_id = ? AND (${conditions}) LIMIT 2000`)
      .all(scope.tenantId, scope.kbId, ...words.map((w) => `%${w.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)) as Row[];
    return rankEntitiesByName(words, rows.map(toEntity), limit);
  }

  searchEntitiesByVector(scope: KbScope, vector: Float32Array, k: number): ScoredEntity[] {
    const top = this.embeddingIndex('entities', scope).search(vector, k);
    const entities = new Map(this.getEntities(scope, top.map((t) => t.item)).map((e) => [e.id, e]));
    return top.flatMap((t) => (entities.has(t.item) ? [{ entity: entities.get(t.item)!, score: t.score }] : []));
  }

  /**
   * Relationships a user weighted negative are left out: they are kept out of retrieval. They
   * are rare, so the nearest k are read first and the search widens only when some were dropped.
   */
  searchRelationshipsByVector(scope: KbScope, vector: Float32Array, k: number): ScoredRelationship[] {
    const index = this.embeddingIndex('relationships', scope);
    for (let wanted = k; ; wanted *= 4) {
      const top = index.search(vector, wanted);
      const relationships = new Map(this.getRelationships(scope, top.map((t) => t.item)).filter((r) => r.weight >= 0).map((r) => [r.id, r]));
      const hits = top.flatMap((t) => (relationships.has(t.item) ? [{ relationship: relationships.get(t.item)!, score: t.score }] : []));
      // Enough left, or the index has nothing further to give.
      if (hits.length >= k || top.length < wanted) return hits.slice(0, k);
    }
  }

  relationshipSimilarities(scope: KbScope, vector: Float32Array, relationshipIds: readonly string[]): Map<string, number> {
    return this.embeddingIndex('relationships', scope).similarities(vector, relationshipIds);
  }

  private embeddingIndex(table: 'entities' | 'relationships', scope: KbScope): VectorIndex {
    return this.vectors.get(table, scope.kbId, () => {
      const rows = this.db
        .prepare(`SELECT id, embedding FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND embedding IS NOT NULL`)
        .raw()
        .all(scope.tenantId, scope.kbId) as Array<[string, Buffer]>;
      return new VectorIndex(rows.map((r) => r[0]), rows.map((r) => bufferToVector(r[1])));
    });
  }

  getRelationships(scope: KbScope, ids: readonly string[]): RelationshipRecord[] {
    return inBatches(ids, (batch) =>
      (this.db.prepare(`${RELATIONSHIP_SELECT} WHERE +r.tenant_id = ? AND +r.kb_id = ? AND r.id IN (${marks(batch)})`).all(scope.tenantId, scope.kbId, ...batch) as Row[]).map(toRelationship),
    );
  }

  relationshipsOfEntities(scope: KbScope, entityIds: readonly string[]): RelationshipRecord[] {
    const seen = new Map<string, RelationshipRecord>();
    inBatches(entityIds, (batch) => {
      // One indexed lookup per end, rather than an OR the planner may turn into a scan.
      const rows = ['source_id', 'target_id'].flatMap(
        (end) =>
          this.db
            .prepare(`${RELATIONSHIP_SELECT} WHERE r.tenant_id = ? AND r.kb_id = ? AND r.${end} IN (${marks(batch)})`)
            .all(scope.tenantId, scope.kbId, ...batch) as Row[],
      );
      for (const row of rows) seen.set(String(row.id), toRelationship(row));
    });
    return [...seen.values()];
  }

  /** Chunk ids that mention each of `ids`, from a mentions table. */
  chunkIds(table: 'entity_mentions' | 'relationship_mentions', column: 'entity_id' | 'relationship_id', scope: KbScope, ids: readonly string[]): Map<string, string[]> {
    const result = new Map<string, string[]>();
    inBatches(ids, (batch) => {
      const rows = this.db
        .prepare(`SELECT ${column} AS owner, chunk_id FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND ${column} IN (${marks(batch)}) ORDER BY chunk_id`)
        .all(scope.tenantId, scope.kbId, ...batch) as Array<{ owner: string; chunk_id: string }>;
      for (const row of rows) {
        const list = result.get(row.owner) ?? [];
        list.push(row.chunk_id);
        result.set(row.owner, list);
      }
    });
    return result;
  }

  exportGraph(scope: KbScope): { entities: EntityRecord[]; relationships: RelationshipRecord[] } {
    const entities = (this.db.prepare(`SELECT ${ENTITY_COLUMNS} FROM entities WHERE tenant_id = ? AND kb_id = ? ORDER BY normalized_name, id`).all(scope.tenantId, scope.kbId) as Row[]).map(toEntity);
    const relationships = (this.db.prepare(`${RELATIONSHIP_SELECT} WHERE r.tenant_id = ? AND r.kb_id = ? ORDER BY r.id`).all(scope.tenantId, scope.kbId) as Row[]).map(toRelationship);
    return { entities, relationships };
  }
}
