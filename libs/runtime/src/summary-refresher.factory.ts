import { summaryModelsOf } from '@trellis/models';
import type { Models } from '@trellis/models';
import { SummaryRefresher } from '@trellis/graph';
import type { GraphSummaryRepository } from '@trellis/storage';

/**
 * What keeps graph summaries current: embeds, and summarises with the LLM when there is one. A
 * failed LLM summary is reported to `warn` and the truncated concatenation is kept instead.
 */
export function createSummaryRefresher(summaries: GraphSummaryRepository, models: Models, warn: (message: string) => void): SummaryRefresher {
  return new SummaryRefresher(summaries, summaryModelsOf(models), (error, item) => warn(`LLM summary of ${item.kind} ${item.id} failed, truncated instead: ${error.message}`));
}
