import type { KbScope, v1 } from '@trellis/contracts';
import type { CommunityRecord } from '@trellis/graph';
import { cosineSimilarity } from '@trellis/models';
import type { TrellisRepositories } from '@trellis/storage';

/** The key-fact chunks of the best communities a global answer may cite, at most. */
const MAX_SOURCE_CHUNKS = 20;

export interface GlobalRetrieval {
  communities: v1.CommunityHit[];
  /** Chunks the communities' key facts come from, best community first, each once. */
  chunkIds: string[];
}

/**
 * Global retrieval: the community reports of a knowledge base ranked by the similarity of the
 * question to their embedding (the report's "title: summary", embedded with the knowledge
 * base's embedder when the report was written), times log2(1 + size): a corpus-wide question
 * is better answered by a community covering many entities than by a pair that happens to
 * share its words. Reports of another embedding model (another dimension) cannot be compared
 * and rank last, by size.
 */
export class GlobalRetriever {
  constructor(private readonly repos: Pick<TrellisRepositories, 'communities'>) {}

  async communityCount(scope: KbScope): Promise<number> {
    return (await this.repos.communities.listCommunities(scope)).length;
  }

  async retrieve(scope: KbScope, questionVector: Float32Array, k: number): Promise<GlobalRetrieval> {
    const communities = await this.repos.communities.listCommunities(scope);
    const scored = communities.map((c) => ({ c, score: comparable(c, questionVector) ? cosineSimilarity(questionVector, c.embedding) * Math.log2(1 + c.memberIds.length) : -1 }));
    scored.sort((a, b) => b.score - a.score || b.c.memberIds.length - a.c.memberIds.length || (a.c.id < b.c.id ? -1 : 1));
    const best = scored.slice(0, k);
    const chunkIds = [...new Set(best.flatMap(({ c }) => c.keyFacts.flatMap((f) => f.chunkIds)))].slice(0, MAX_SOURCE_CHUNKS);
    return {
      communities: best.map(({ c, score }) => ({
        id: c.id,
        level: c.level,
        title: c.title,
        summary: c.summary,
        score,
        keyFacts: c.keyFacts.map((f) => ({ text: f.text, relationshipId: f.relationshipId, chunkIds: [...f.chunkIds] })),
      })),
      chunkIds,
    };
  }
}

function comparable(c: CommunityRecord, vector: Float32Array): boolean {
  return c.embedding.length > 0 && c.embedding.length === vector.length;
}
