import type { ExtractionResult } from '@trellis/storage';
import type { ExtractionReport } from './extraction-report';

/** Turns one chunk of text into entities and relationships. */
export interface Extractor {
  /** Identity of the model behind it; part of the extraction cache key. */
  readonly model: string;
  /** Version of the prompt or rules; part of the cache key, changes whenever output may. */
  readonly promptVersion: string;
  /** True when extracting calls a language model: such extraction is what LLM budgets pause. */
  readonly usesLlm: boolean;
  /** `report`, when given, receives the calls, tokens and item decisions of this extraction. */
  extract(text: string, context: { heading: string }, report?: ExtractionReport): Promise<ExtractionResult>;
}
