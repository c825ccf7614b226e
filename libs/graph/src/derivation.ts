import { stableId } from '@trellis/contracts';

/** Longest derived summary kept on an entity or relationship, in characters. */
export const MAX_SUMMARY_CHARS = 2000;

/**
 * Mentions an entity's or relationship's summary, summary hash and shown name are derived from:
 * its first this many in chunk order (about 100,000 characters of descriptions, the largest
 * summary a knowledge base may ask for, at the 200 characters a local description averages).
 * A hub mentioned by thousands of chunks was read whole after every chunk that mentioned it
 * (600 mentions per new mention on average at 100k passages) and summarised again for every new
 * description, with all of them in the LLM's prompt; now a mention changes its summary only when
 * it is among those first ones, which the mention key alone tells. Counts, weights and the review
 * flag still count every mention.
 */
export const MAX_SUMMARY_MENTIONS = 500;

/**
 * An entity's or relationship's summary, derived from the descriptions its mentions carry:
 * distinct descriptions in mention order, joined, capped. Recomputable at any time, which is
 * what lets deletion and re-indexing leave no stale text behind.
 */
export function summarizeDescriptions(descriptions: readonly string[], maxChars = MAX_SUMMARY_CHARS): string {
  return summaryParts(descriptions, maxChars).join(' ');
}

/** The descriptions summarizeDescriptions joins: the distinct ones, in order, while they fit. */
export function summaryParts(descriptions: readonly string[], maxChars = MAX_SUMMARY_CHARS): string[] {
  const parts: string[] = [];
  let length = 0;
  for (const d of distinctDescriptions(descriptions)) {
    if (length + d.length > maxChars) break;
    parts.push(d);
    length += d.length + 1;
  }
  return parts;
}

/** Non-empty descriptions, trimmed, without case-insensitive repeats, in the given order. */
export function distinctDescriptions(descriptions: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of descriptions) {
    const d = raw.trim();
    const key = d.toLowerCase();
    if (d === '' || seen.has(key)) continue;
    seen.add(key);
    out.push(d);
  }
  return out;
}

/**
 * Identifies what a summary is computed from (the shown name and the set of the mentions'
 * descriptions), so summaries and embeddings are recomputed when, and only when, that changes.
 * The order of the descriptions does not count: re-indexing a document gives its chunks new
 * ids, which reorders the same descriptions, and must not pay for new LLM summaries.
 */
export function summaryInputsHash(name: string, descriptions: readonly string[]): string {
  return stableId('sum', name, ...distinctDescriptions(descriptions).sort());
}

/**
 * The name an entity shows: the spelling its mentions use most often; among equally common
 * ones the longest, then the first in code-point order. Independent of the order in which
 * chunks were written, so every deployment that indexed the same text names it the same.
 */
export function preferredName(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const name of names) if (name !== '') counts.set(name, (counts.get(name) ?? 0) + 1);
  let best = '';
  let bestCount = 0;
  for (const [name, count] of counts) {
    if (count > bestCount || (count === bestCount && (name.length > best.length || (name.length === best.length && name < best)))) {
      best = name;
      bestCount = count;
    }
  }
  return best;
}

/** What an entity row derives from the mentions that remain. */
export interface DerivedEntity {
  name: string;
  summary: string;
  summaryHash: string;
  mentionCount: number;
  /** Every mention only names the entity (none describes it). */
  needsReview: boolean;
}

/** Counted over every mention, where `mentions` are only the first MAX_SUMMARY_MENTIONS of them. */
export interface EntityTotals {
  readonly mentionCount: number;
  readonly needsReview: boolean;
}

/** The entity row from its mentions: all of them, or the first MAX_SUMMARY_MENTIONS with the totals of all. */
export function deriveEntity(mentions: ReadonlyArray<{ name: string; description: string; needsReview: boolean }>, totals?: EntityTotals): DerivedEntity {
  const name = preferredName(mentions.map((m) => m.name));
  const descriptions = mentions.map((m) => m.description);
  return {
    name,
    summary: summarizeDescriptions(descriptions),
    summaryHash: summaryInputsHash(name, descriptions),
    mentionCount: totals?.mentionCount ?? mentions.length,
    needsReview: totals?.needsReview ?? mentions.every((m) => m.needsReview),
  };
}

/** What a relationship row derives from its mentions: the weight is the sum of their strengths. */
export interface DerivedRelationship {
  weight: number;
  summary: string;
  summaryHash: string;
  mentionCount: number;
}

/** Counted over every mention, where `mentions` are only the first MAX_SUMMARY_MENTIONS of them. */
export interface RelationshipTotals {
  readonly mentionCount: number;
  readonly weight: number;
}

/** The relationship row from its mentions: all of them, or the first MAX_SUMMARY_MENTIONS with the totals of all. */
export function deriveRelationship(mentions: ReadonlyArray<{ description: string; strength: number }>, totals?: RelationshipTotals): DerivedRelationship {
  const descriptions = mentions.map((m) => m.description);
  return {
    weight: totals?.weight ?? mentions.reduce((sum, m) => sum + m.strength, 0),
    summary: summarizeDescriptions(descriptions),
    summaryHash: summaryInputsHash('', descriptions),
    mentionCount: totals?.mentionCount ?? mentions.length,
  };
}

/**
 * Orders entities found by name for the words of a query: whole-word hits first, an exact name
 * on top, popularity as the tie-breaker. The graph reads fetch candidates by the words of names and rank here.
 */
export function rankEntitiesByName<T extends { normalizedName: string; mentionCount: number }>(words: readonly string[], entities: readonly T[], limit: number): T[] {
  const phrase = words.join(' ');
  const scored = entities.map((entity) => {
    const nameWords = new Set(entity.normalizedName.split(' '));
    const hits = words.filter((w) => nameWords.has(w)).length;
    return { entity, score: hits * 10 + (entity.normalizedName === phrase ? 100 : 0) + Math.log1p(entity.mentionCount) };
  });
  return scored
    .sort((a, b) => b.score - a.score)
    .slice(0, Math.max(0, limit))
    .map((s) => s.entity);
}
