import type { ResolutionDefaults } from '@trellis/config';
import type { EmbeddingProvider } from '@trellis/models';
import type { ExtractionResult, KbSettings } from '@trellis/storage';
import { fakeEmbedding } from '@trellis/testing';

/** What the community tests index with: bag-of-words vectors, name resolution, default chunking. */
export const embedder: EmbeddingProvider = { model: 'bag-of-words', dimensions: 64, embed: async (texts) => texts.map((t) => Float32Array.from(fakeEmbedding(t, 64))) };
export const DEFAULTS: ResolutionDefaults = { mode: 'name', similarityThreshold: 0.6, llmMergeDecisions: false, llmMergeFloor: 0.4, summaryMaxChars: 2000 };
export const SETTINGS: KbSettings = { chunkSizeTokens: 512, chunkOverlapTokens: 64, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };

/** A group of entities all related to each other, as one document would state them. */
export function topic(names: readonly string[], about: string): ExtractionResult {
  return {
    entities: names.map((name) => ({ name, type: 'thing', description: `${name} is part of ${about}.` })),
    relationships: names.flatMap((a, i) => names.slice(i + 1).map((b) => ({ source: a, target: b, label: 'relates to', description: `${a} and ${b} in ${about}.`, strength: 8 }))),
  };
}

/** Topics that share nothing: each becomes a community of its own. */
export const TOPICS = {
  databases: topic(['TiDB', 'PingCAP', 'TiKV', 'TiFlash', 'MySQL protocol'], 'distributed databases'),
  planets: topic(['Mercury', 'Venus', 'Earth', 'Mars', 'Sun'], 'the solar system'),
  composers: topic(['Bach', 'Leipzig', 'Handel', 'Telemann', 'Baroque music'], 'baroque music'),
  rivers: topic(['Danube', 'Rhine', 'Elbe', 'Vltava', 'Europe'], 'European rivers'),
} satisfies Record<string, ExtractionResult>;
