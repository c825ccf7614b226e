import type { KbScope } from '@trellis/contracts';
import { fullTextTerms } from '@trellis/text-search';
import type { GraphReadRepository } from '@trellis/storage';

/** Entities whose names share words with the question, considered as named by it. */
const NAME_CANDIDATES = 40;
/** Share of an entity name's words the question must contain for the entity to count as named. */
const MIN_NAME_COVERAGE = 0.5;
const NAMED_SEEDS = 8;

/**
 * Entities the question names: candidates sharing words with it, kept when the question
 * covers most of the entity's name, weighted by that coverage and damped for entities
 * mentioned everywhere (a hub says little about any one passage). Best = 1. Names only, so a
 * graph without descriptions (OpenIE triples) is matched the same way.
 */
export async function namedEntities(graphReads: Pick<GraphReadRepository, 'searchEntityNodesByName'>, scope: KbScope, queryText: string): Promise<Map<string, number>> {
  const terms = new Set(fullTextTerms(queryText));
  const weighted: Array<[string, number]> = [];
  for (const e of await graphReads.searchEntityNodesByName(scope, queryText, NAME_CANDIDATES)) {
    const words = fullTextTerms(e.name);
    if (words.length === 0) continue;
    const coverage = words.filter((w) => terms.has(w)).length / words.length;
    if (coverage < MIN_NAME_COVERAGE) continue;
    weighted.push([e.id, coverage ** 2 / Math.log2(2 + e.mentionCount)]);
  }
  weighted.sort((a, b) => b[1] - a[1]);
  const best = weighted[0]?.[1] ?? 1;
  return new Map(weighted.slice(0, NAMED_SEEDS).map(([id, w]) => [id, w / best]));
}
