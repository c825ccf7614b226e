import { stableId } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import type { ChatModel, TokenUsage } from '@trellis/models';
import { cosineSimilarity } from '@trellis/models';
import type { EntityCandidate } from '@trellis/storage';

/** How one knowledge base resolves mentions, with server defaults already applied. */
export interface ResolutionPolicy {
  mode: 'name' | 'embedding';
  similarityThreshold: number;
  /** Ask the LLM about candidates in [llmMergeFloor, similarityThreshold). */
  llmMergeDecisions: boolean;
  llmMergeFloor: number;
}

/** An entity as a chunk mentions it, with the embedding of "name (type): description". */
export interface EntityMention {
  name: string;
  normalizedName: string;
  type: string;
  description: string;
  embedding: Float32Array;
}

/** Types that say nothing about which of two same-name entities is meant. */
const UNINFORMATIVE_TYPES = new Set(['', 'concept', 'unreviewed', 'unknown', 'other', 'entity']);

/**
 * Decides which graph entity a mention is. Same normalised name is required; then, in
 * embedding mode, a description embedding at least `similarityThreshold` close to a
 * candidate's summary embedding makes it that entity. Below that, the mention still joins the
 * closest candidate of a compatible type whose similarity is at least `llmMergeFloor` (asking
 * the LLM first when the knowledge base allows it); only a contradicting type, a description
 * under the floor, or the LLM's "no" starts a distinct entity of the same name.
 *
 * Ids are derived, never random, so a redelivered chunk and concurrent writers converge: the
 * first entity of a name keeps stableId(kb, name) (the id name-only resolution gives, so by name
 * two concurrent first mentions meet on one row); a distinct one takes stableId(kb, name, type)
 * and, when that is taken too, stableId(kb, name, chunk). In embedding mode two concurrent first
 * mentions both choose the base id; the graph writer then finds the row taken by the other write
 * and resolves again, comparing the mention with it.
 */
export class EntityResolver {
  /** LLM merge questions asked, for tests and logs. */
  llmDecisions = 0;

  constructor(
    private readonly llm: ChatModel | null,
    private readonly onLlmFailure: (error: Error) => void = () => undefined,
  ) {}

  static baseId(scope: KbScope, normalizedName: string): string {
    return stableId('ent', scope.tenantId, scope.kbId, normalizedName);
  }

  /**
   * Entity id for each mention, in order. `candidates` are the KB's entities with those names;
   * `previous` maps a normalised name to the entity that the same chunk content (an earlier
   * version of the document, or a copy elsewhere) was resolved to, which wins while it exists:
   * re-indexing unchanged text must give the same graph even though summaries moved since.
   */
  async resolve(
    scope: KbScope,
    chunkId: string,
    mentions: readonly EntityMention[],
    candidates: readonly EntityCandidate[],
    policy: ResolutionPolicy,
    previous: ReadonlyMap<string, string> = new Map(),
    onUsage?: (usage: TokenUsage) => void,
  ): Promise<string[]> {
    const ids: string[] = [];
    for (const mention of mentions) {
      const earlier = previous.get(mention.normalizedName);
      const stillThere = earlier !== undefined && candidates.some((c) => c.entity.id === earlier);
      ids.push(stillThere && policy.mode === 'embedding' ? earlier : await this.resolveOne(scope, chunkId, mention, candidates, policy, onUsage));
    }
    return ids;
  }

  private async resolveOne(
    scope: KbScope,
    chunkId: string,
    mention: EntityMention,
    allCandidates: readonly EntityCandidate[],
    policy: ResolutionPolicy,
    onUsage: ((usage: TokenUsage) => void) | undefined,
  ): Promise<string> {
    const baseId = EntityResolver.baseId(scope, mention.normalizedName);
    const candidates = allCandidates.filter((c) => c.entity.normalizedName === mention.normalizedName);
    if (policy.mode === 'name' || candidates.length === 0) return baseId;
    // A mention that only names the entity carries nothing to tell same-name entities apart.
    if (mention.description.trim() === '') return mostMentioned(candidates, baseId);

    const described = candidates.filter((c) => c.entity.description.trim() !== '' && c.embedding.length === mention.embedding.length);
    const scored = described
      .map((c) => ({ candidate: c, score: cosineSimilarity(mention.embedding, c.embedding) }))
      .sort((a, b) => b.score - a.score || compare(a.candidate.entity.id, b.candidate.entity.id));
    const best = scored[0];
    if (best && best.score >= policy.similarityThreshold) return best.candidate.entity.id;
    // An entity nobody described yet contradicts nothing: the first description makes it.
    const undescribed = candidates.filter((c) => !described.includes(c));
    if (undescribed.length > 0) return mostMentioned(undescribed, baseId);
    // Below the threshold, a same-name entity is still the same one unless there is strong
    // evidence against it: another informative type, a description far off (under the floor),
    // or the LLM's "no". Descriptions of one thing written from different chunks ("the country
    // where she was born", "whose army invaded") are rarely close, and splitting on that alone
    // broke one well-known name into dozens of entities.
    const compatible = scored.find((s) => typesAgree(mention.type, s.candidate.entity.type) && s.score >= policy.llmMergeFloor);
    if (compatible) {
      if (!policy.llmMergeDecisions || this.llm === null) return compatible.candidate.entity.id;
      if (await this.sameEntity(mention, compatible.candidate, onUsage)) return compatible.candidate.entity.id;
    }
    return distinctId(scope, chunkId, mention, candidates, baseId);
  }

  private async sameEntity(mention: EntityMention, candidate: EntityCandidate, onUsage: ((usage: TokenUsage) => void) | undefined): Promise<boolean> {
    this.llmDecisions++;
    try {
      const reply = await this.llm!.complete(
        [
          {
            role: 'system',
            content:
              'You decide whether two descriptions of a knowledge-graph entity with the same name are about the same real-world thing. ' +
              'Reply with JSON only: {"same": true} or {"same": false}.',
          },
          {
            role: 'user',
            content:
              `Name: ${mention.name}\n` +
              `A (${candidate.entity.type}): ${candidate.entity.description}\n` +
              `B (${mention.type}): ${mention.description}`,
          },
        ],
        // The graph write waits for the answer.
        { temperature: 0, maxTokens: 20, onUsage, priority: 'follow-up' },
      );
      return parseSameEntityReply(reply);
    } catch (error) {
      // Unsure means distinct: a wrong split is cheaper to repair than a wrong merge.
      this.onLlmFailure(error as Error);
      return false;
    }
  }
}

/**
 * Reads a yes/no merge decision from a reply that should be {"same": bool} but may be wrapped
 * in prose or a code fence, use another key, or just say yes or no. Anything unclear is "no".
 */
export function parseSameEntityReply(reply: string): boolean {
  const json = /\{[\s\S]*?\}/.exec(reply);
  if (json) {
    try {
      const parsed = JSON.parse(json[0]) as Record<string, unknown>;
      for (const value of Object.values(parsed)) {
        if (typeof value === 'boolean') return value;
        if (typeof value === 'string' && /^(yes|true|same)$/i.test(value.trim())) return true;
        if (typeof value === 'string' && /^(no|false|different)$/i.test(value.trim())) return false;
      }
    } catch {
      // Not JSON after all: fall through to the words.
    }
  }
  const text = reply.toLowerCase();
  const yes = /\b(yes|true|same entity)\b/.test(text);
  const no = /\b(no|false|not the same|different)\b/.test(text);
  return yes && !no;
}

/** Two types contradict each other only when both say something and they differ. */
function typesAgree(a: string, b: string): boolean {
  const x = a.trim().toLowerCase();
  const y = b.trim().toLowerCase();
  return x === y || UNINFORMATIVE_TYPES.has(x) || UNINFORMATIVE_TYPES.has(y);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The base entity if among them, else the most mentioned (smallest id on ties). */
function mostMentioned(candidates: readonly EntityCandidate[], baseId: string): string {
  if (candidates.some((c) => c.entity.id === baseId)) return baseId;
  const sorted = [...candidates].sort((a, b) => b.entity.mentionCount - a.entity.mentionCount || compare(a.entity.id, b.entity.id));
  return sorted[0]!.entity.id;
}

function distinctId(scope: KbScope, chunkId: string, mention: EntityMention, candidates: readonly EntityCandidate[], baseId: string): string {
  const taken = new Set(candidates.map((c) => c.entity.id));
  if (!taken.has(baseId)) return baseId;
  const type = mention.type.trim().toLowerCase();
  if (!UNINFORMATIVE_TYPES.has(type)) {
    const byType = stableId('ent', scope.tenantId, scope.kbId, mention.normalizedName, 'type', type);
    if (!taken.has(byType)) return byType;
  }
  return stableId('ent', scope.tenantId, scope.kbId, mention.normalizedName, 'chunk', chunkId);
}
