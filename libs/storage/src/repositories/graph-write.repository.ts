import type { KbScope } from '@trellis/contracts';
import type { EntityMentionWrite, RelationshipMentionWrite } from '@trellis/graph';
import type { EntityCandidate } from '../records';

/**
 * What applyChunkExtraction did: wrote the chunk's mentions; found no such chunk (deleted
 * meanwhile) and wrote nothing; or wrote nothing because an entity it was told is new had been
 * created meanwhile (the caller resolved against a graph that has since changed).
 */
export type ChunkGraphWrite = 'written' | 'no-chunk' | 'entity-taken';

/** What writing one chunk's extraction into the graph reads and writes. */
export interface GraphWriteRepository {
  /**
   * Replaces what one chunk says about the graph: its previous mentions go, the new ones are
   * written, entities and relationships are created as needed, and the summaries of every
   * entity and relationship touched are recomputed from their remaining mentions. Entities
   * and relationships left without any mention are deleted. One transaction.
   *
   * `newEntityIds` are the entities the caller means to create: ids no candidate had when it
   * resolved. If any of them exists by the time of the write (a concurrent write created it),
   * nothing is written and the result is 'entity-taken', so the caller resolves again against
   * the graph as it is now, instead of joining an entity it never compared the mention with.
   */
  applyChunkExtraction(
    scope: KbScope,
    chunkId: string,
    entities: readonly EntityMentionWrite[],
    relationships: readonly RelationshipMentionWrite[],
    newEntityIds?: ReadonlySet<string>,
  ): Promise<ChunkGraphWrite>;
  /** Entities with any of these normalised names, with their embeddings, by id: what a mention may resolve to. */
  listEntityCandidates(scope: KbScope, normalizedNames: readonly string[]): Promise<EntityCandidate[]>;
  /**
   * The entity mentions (name as written, entity id) of the other chunks with the same content
   * as this one: an earlier version of its document, or a copy in another document.
   */
  entityMentionsOfSameContent(scope: KbScope, chunkId: string): Promise<Array<{ name: string; entityId: string }>>;
}
