import type { KbScope } from '@trellis/contracts';
import type { EntityNode, EntityRecord, RelationshipEdge, RelationshipRecord, ScoredEntity, ScoredRelationship } from '../records';

/** Reads of the graph as retrieval and the graph API see it (edits applied). */
export interface GraphReadRepository {
  getEntities(scope: KbScope, ids: readonly string[]): Promise<EntityRecord[]>;
  /** The same entities as {@link getEntities}, names and mention counts only: what a walk over hundreds needs. */
  getEntityNodes(scope: KbScope, ids: readonly string[]): Promise<EntityNode[]>;
  findEntitiesByNormalizedName(scope: KbScope, normalizedName: string): Promise<EntityRecord[]>;
  /** Entities whose name contains the query's words, best match first. */
  searchEntitiesByName(scope: KbScope, query: string, limit: number): Promise<EntityRecord[]>;
  /** The same entities as {@link searchEntitiesByName}, names and mention counts only: what finding the entities a question names needs. */
  searchEntityNodesByName(scope: KbScope, query: string, limit: number): Promise<EntityNode[]>;
  searchEntitiesByVector(scope: KbScope, vector: Float32Array, k: number): Promise<ScoredEntity[]>;
  searchRelationshipsByVector(scope: KbScope, vector: Float32Array, k: number): Promise<ScoredRelationship[]>;
  /** Cosine similarity of `vector` to each of these relationships' embeddings. */
  relationshipSimilarities(scope: KbScope, vector: Float32Array, relationshipIds: readonly string[]): Promise<Map<string, number>>;
  /** In the order of `ids`, skipping ids that do not exist. */
  getRelationships(scope: KbScope, ids: readonly string[]): Promise<RelationshipRecord[]>;
  /** Relationships with either end in `entityIds`. */
  relationshipsOfEntities(scope: KbScope, entityIds: readonly string[]): Promise<RelationshipRecord[]>;
  /**
   * The same relationships as {@link relationshipsOfEntities}, as edges only (no rows read): what a
   * walk needs. With `perEntity`, at most that many per entity and end, the heaviest (ties by id, descending):
   * not a hub's thousands.
   */
  relationshipEdgesOfEntities(scope: KbScope, entityIds: readonly string[], perEntity?: number): Promise<RelationshipEdge[]>;
  /** Chunk ids that mention each relationship. */
  chunkIdsForRelationships(scope: KbScope, relationshipIds: readonly string[]): Promise<Map<string, string[]>>;
  /** Chunk ids that mention each entity. */
  chunkIdsForEntities(scope: KbScope, entityIds: readonly string[]): Promise<Map<string, string[]>>;
  /**
   * Entity ids each chunk mentions (the other direction of {@link chunkIdsForEntities}); with
   * `among`, only those of these entities.
   */
  entityIdsForChunks(scope: KbScope, chunkIds: readonly string[], among?: readonly string[]): Promise<Map<string, string[]>>;
  exportGraph(scope: KbScope): Promise<{ entities: EntityRecord[]; relationships: RelationshipRecord[] }>;
}
