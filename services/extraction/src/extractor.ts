import type { ExtractionResult } from '@trellis/storage';

/** Turns one chunk of text into entities and relationships. */
export interface Extractor {
  /** Identity of the model behind it; part of the extraction cache key. */
  readonly model: string;
  /** Version of the prompt or rules; part of the cache key, bump it when output changes. */
  readonly promptVersion: string;
  extract(text: string, context: { heading: string }): Promise<ExtractionResult>;
}
