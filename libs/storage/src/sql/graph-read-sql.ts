import type { KbScope } from '@trellis/contracts';
import { rankEntitiesByName } from '@trellis/graph';
import { fullTextTerms } from '@trellis/text-search';
import type { EntityNode, EntityRecord, RelationshipEdge, RelationshipRecord, ScoredEntity, ScoredRelationship } from '../records';
import type { GraphReadRepository } from '../repositories/graph-read.repository';
import { EDGE_SELECT, ENTITY_COLUMNS, ENTITY_NODE_COLUMNS, RELATIONSHIP_SELECT, batches, inIdOrder, marks, toEdge, toEntity, toEntityNode, toRelationship } from '../row-mappers';
import type { Row } from '../row-mappers';
import { SqlRepository } from './sql-engine';
import { groupByOwner, rowsWhereIn } from './sql-session';
import { chunkIdsOf } from './mention-sql';
import { entityIdsByNameWords } from './entity-name-terms-sql';
import { RETRIEVABLE, graphCandidates } from './vector-ranking';
import { ENTITY_NODES_INDEX } from './schema/graph-tables';

/**
 * Entities found by name that are ranked for a query, most query words first: reading their
 * names and counts is most of a lookup's cost (2,000 took 11 ms at 140k entities, 500 take 3),
 * and callers keep 40 at most.
 */
const NAME_CANDIDATES = 500;
/** Entity ids an `among` filter puts in a statement at most; past it they are filtered after the read. */
const MAX_AMONG = 500;
/** Entities whose heaviest edges one statement reads: a subquery each, within SQLite's 500 terms of a compound select. */
const HEAVIEST_PER_STATEMENT = 100;

/** Graph reads: entities and relationships by id, name and vector, their neighbourhoods and provenance; all bound to the scope. */
export class SqlGraphReads extends SqlRepository implements GraphReadRepository {
  /** In the order of `ids`, skipping ids that do not exist. */
  async getEntities(scope: KbScope, ids: readonly string[]): Promise<EntityRecord[]> {
    const sql = (m: string) => `SELECT ${ENTITY_COLUMNS} FROM entities WHERE ${this.dialect.byIdScope()} AND id IN (${m})`;
    return inIdOrder(ids, (await rowsWhereIn(this.db, sql, [scope.tenantId, scope.kbId], ids)).map(toEntity));
  }

  /** In the order of `ids`, skipping ids that do not exist; the row's description and type are not read. */
  async getEntityNodes(scope: KbScope, ids: readonly string[]): Promise<EntityNode[]> {
    const held = this.engine.adjacency?.current(scope);
    if (held !== undefined) return held.nodes(ids);
    const sql = (m: string) => `SELECT ${ENTITY_NODE_COLUMNS} FROM entities${this.dialect.indexedBy(ENTITY_NODES_INDEX)} WHERE ${this.dialect.byIdScope()} AND id IN (${m})`;
    return inIdOrder(ids, (await rowsWhereIn(this.db, sql, [scope.tenantId, scope.kbId], ids)).map(toEntityNode));
  }

  async findEntitiesByNormalizedName(scope: KbScope, normalizedName: string): Promise<EntityRecord[]> {
    const rows = await this.db.rows(`SELECT ${ENTITY_COLUMNS} FROM entities WHERE tenant_id = ? AND kb_id = ? AND normalized_name = ?`, [scope.tenantId, scope.kbId, normalizedName]);
    return rows.map(toEntity);
  }

  /** The entities of searchEntityNodesByName, read whole. */
  async searchEntitiesByName(scope: KbScope, query: string, limit: number): Promise<EntityRecord[]> {
    return this.getEntities(scope, (await this.searchEntityNodesByName(scope, query, limit)).map((e) => e.id));
  }

  /**
   * Candidates from the words of the names (entityIdsByNameWords: whole words, then word
   * starts; not words inside words), ranked by rankEntitiesByName on their names and counts.
   */
  async searchEntityNodesByName(scope: KbScope, query: string, limit: number): Promise<EntityNode[]> {
    const words = fullTextTerms(query);
    const ids = await entityIdsByNameWords(this.db, scope, words, limit, NAME_CANDIDATES);
    return rankEntitiesByName(words, await this.getEntityNodes(scope, ids), limit);
  }

  async searchEntitiesByVector(scope: KbScope, vector: Float32Array, k: number): Promise<ScoredEntity[]> {
    const top = await this.engine.vectors.nearest(this.db, graphCandidates('entities', scope), vector, k);
    const entities = new Map((await this.getEntities(scope, top.map((t) => t.item))).map((e) => [e.id, e]));
    return top.flatMap((t) => {
      const entity = entities.get(t.item);
      return entity ? [{ entity, score: t.score }] : [];
    });
  }

  /** Relationships a user weighted negative are left out: they are kept out of retrieval. */
  async searchRelationshipsByVector(scope: KbScope, vector: Float32Array, k: number): Promise<ScoredRelationship[]> {
    const top = await this.engine.vectors.nearest(this.db, graphCandidates('relationships', scope), vector, k, RETRIEVABLE);
    const relationships = new Map((await this.getRelationships(scope, top.map((t) => t.item))).map((r) => [r.id, r]));
    return top.flatMap((t) => {
      const relationship = relationships.get(t.item);
      return relationship ? [{ relationship, score: t.score }] : [];
    });
  }

  relationshipSimilarities(scope: KbScope, vector: Float32Array, relationshipIds: readonly string[]): Promise<Map<string, number>> {
    return this.engine.vectors.similarities(this.db, graphCandidates('relationships', scope), vector, relationshipIds);
  }

  async getRelationships(scope: KbScope, ids: readonly string[]): Promise<RelationshipRecord[]> {
    const sql = (m: string) => `${RELATIONSHIP_SELECT} WHERE ${this.dialect.byIdScope('r')} AND r.id IN (${m})`;
    return inIdOrder(ids, (await rowsWhereIn(this.db, sql, [scope.tenantId, scope.kbId], ids)).map(toRelationship));
  }

  /** In id order. */
  relationshipsOfEntities(scope: KbScope, entityIds: readonly string[]): Promise<RelationshipRecord[]> {
    return this.ofEntities(scope, entityIds, (_end, where) => `${RELATIONSHIP_SELECT} WHERE ${where}`, toRelationship);
  }

  /**
   * In id order; every column read is in the endpoint indexes (relationship_heaviest_by_*), so
   * no row is. With `perEntity`, each end's edges are read per entity, heaviest first (ties by
   * id, descending), and only the first `perEntity`: the index orders an entity's edges by
   * weight, so a hub's are never all read.
   */
  async relationshipEdgesOfEntities(scope: KbScope, entityIds: readonly string[], perEntity?: number): Promise<RelationshipEdge[]> {
    const limit = perEntity === undefined ? undefined : Math.max(1, Math.floor(perEntity));
    const held = this.engine.adjacency?.current(scope);
    if (held !== undefined) return held.edges(entityIds, limit);
    if (limit === undefined) return this.ofEntities(scope, entityIds, (_end, where) => `${EDGE_SELECT} WHERE ${where}`, toEdge);
    return this.heaviestEdges(scope, entityIds, limit);
  }

  /**
   * One bounded range of the index per entity and end, the ranges of up to HEAVIEST_PER_STATEMENT
   * entities joined in one statement (a round trip on the MySQL family).
   */
  private async heaviestEdges(scope: KbScope, entityIds: readonly string[], limit: number): Promise<RelationshipEdge[]> {
    const seen = new Map<string, RelationshipEdge>();
    const distinct = [...new Set(entityIds)];
    for (const end of ['source_id', 'target_id']) {
      const range = `SELECT * FROM (${EDGE_SELECT} WHERE r.tenant_id = ? AND r.kb_id = ? AND r.${end} = ? ORDER BY r.weight DESC, r.id DESC LIMIT ${limit}) heaviest`;
      for (const batch of batches(distinct, HEAVIEST_PER_STATEMENT)) {
        const rows = await this.db.rows(
          batch.map(() => range).join(' UNION ALL '),
          batch.flatMap((id) => [scope.tenantId, scope.kbId, id]),
        );
        for (const row of rows) seen.set(String(row.id), toEdge(row));
      }
    }
    return inIdOrderOfKeys(seen);
  }

  /** Relationships with either end in `entityIds`, in id order: one indexed lookup per end, rather than an OR a planner may turn into a scan. */
  private async ofEntities<T extends { id: string }>(scope: KbScope, entityIds: readonly string[], select: (end: string, where: string) => string, map: (row: Row) => T): Promise<T[]> {
    const seen = new Map<string, T>();
    for (const end of ['source_id', 'target_id']) {
      const sql = (m: string) => select(end, `r.tenant_id = ? AND r.kb_id = ? AND r.${end} IN (${m})`);
      for (const row of await rowsWhereIn(this.db, sql, [scope.tenantId, scope.kbId], entityIds)) seen.set(String(row.id), map(row));
    }
    return inIdOrderOfKeys(seen);
  }

  chunkIdsForRelationships(scope: KbScope, relationshipIds: readonly string[]): Promise<Map<string, string[]>> {
    return chunkIdsOf(this.db, this.dialect, scope, 'relationship_mentions', relationshipIds);
  }

  async chunkIdsForEntities(scope: KbScope, entityIds: readonly string[]): Promise<Map<string, string[]>> {
    const held = this.engine.adjacency?.current(scope);
    if (held !== undefined) return held.chunkIdsOf(entityIds);
    return chunkIdsOf(this.db, this.dialect, scope, 'entity_mentions', entityIds);
  }

  /**
   * In entity id order per chunk; uses the mentions' index by chunk. With `among` (at most
   * MAX_AMONG ids; more are filtered here), only the mentions of those entities come back from
   * the index: a chunk's other mentions are never made rows.
   */
  async entityIdsForChunks(scope: KbScope, chunkIds: readonly string[], among?: readonly string[]): Promise<Map<string, string[]>> {
    if (among?.length === 0) return new Map();
    const held = this.engine.adjacency?.current(scope);
    if (held !== undefined) return held.entityIdsOf(chunkIds, among);
    const inSql = among !== undefined && among.length <= MAX_AMONG;
    const filter = inSql ? ` AND entity_id IN (${marks(among)})` : '';
    const sql = (m: string) => `SELECT DISTINCT chunk_id AS owner, entity_id FROM entity_mentions WHERE tenant_id = ? AND kb_id = ?${filter} AND chunk_id IN (${m}) ORDER BY chunk_id, entity_id`;
    const rows = await rowsWhereIn(this.db, sql, [scope.tenantId, scope.kbId, ...(inSql ? among : [])], chunkIds);
    const wanted = among !== undefined && !inSql ? new Set(among) : null;
    return new Map([...groupByOwner(rows)].map(([chunk, mentions]) => [chunk, mentions.map((m) => String(m.entity_id)).filter((id) => wanted === null || wanted.has(id))]));
  }

  async exportGraph(scope: KbScope): Promise<{ entities: EntityRecord[]; relationships: RelationshipRecord[] }> {
    const params = [scope.tenantId, scope.kbId];
    const entities = (await this.db.rows(`SELECT ${ENTITY_COLUMNS} FROM entities WHERE tenant_id = ? AND kb_id = ? ORDER BY normalized_name, id`, params)).map(toEntity);
    const relationships = (await this.db.rows(`${RELATIONSHIP_SELECT} WHERE r.tenant_id = ? AND r.kb_id = ? ORDER BY r.id`, params)).map(toRelationship);
    return { entities, relationships };
  }

  /** Chunk ids mentioning each owner, in chunk id order. */
}

function inIdOrderOfKeys<T>(byId: ReadonlyMap<string, T>): T[] {
  return [...byId.keys()].sort().map((id) => byId.get(id)!);
}
