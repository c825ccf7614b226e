const MAX_ADDED_NAMES = 5;

/**
 * Refinement without an LLM: the question plus the names of the most relevant graph
 * entities it does not already mention, so chunk retrieval also finds passages about the
 * entities the graph walk reached (the second hop of a multi-hop question).
 */
export function refineQuestionWithEntities(question: string, entityNames: readonly string[]): string {
  const lower = question.toLowerCase();
  const additions = [...new Set(entityNames)].filter((name) => !lower.includes(name.toLowerCase())).slice(0, MAX_ADDED_NAMES);
  return additions.length === 0 ? question : `${question} (${additions.join(', ')})`;
}
