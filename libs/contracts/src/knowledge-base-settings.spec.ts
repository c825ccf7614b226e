import { describe, expect, it } from 'vitest';
import { TOPICS } from './topics';
import { fromEventSettings, toEventSettings } from './knowledge-base-settings';
import type { KbSettings } from './knowledge-base-settings';

const PLAIN: KbSettings = { chunkSizeTokens: 256, chunkOverlapTokens: 32, splitter: 'markdown', embeddingModel: 'local-hash-v1', embeddingDimensions: 384, llmModel: 'gpt-4o-mini', extractionPromptVersion: 'v3' };
const TAILORED: KbSettings = {
  ...PLAIN,
  extraction: { entityTypes: ['drug', 'trial'], instructions: 'Name every dosage.', examples: 'Aspirin -> drug', gleaningPasses: 1, outputMode: 'json_object' },
  resolution: { mode: 'name', similarityThreshold: 0.75, llmMergeDecisions: 'off', llmMergeFloor: 0.5, summaryMaxChars: 400 },
};

/** What a stage reads back from an event that crossed Kafka (protobuf encoded and decoded). */
function overTheWire(settings: KbSettings) {
  const context = { tenantId: 't', knowledgeBaseId: 'kb', documentId: 'd', documentVersion: 1, traceparent: '', knowledgeBase: toEventSettings({ name: 'trials', settings }) };
  const codec = TOPICS['chunk.ready'].codec;
  return codec.decode(codec.encode({ context, chunkId: 'c', contentHash: 'h' }).finish()).context!;
}

describe('knowledge-base settings in indexing events', () => {
  it('arrive as the knowledge base had them, tailored or default (absent stays absent)', () => {
    for (const settings of [PLAIN, TAILORED]) {
      expect(fromEventSettings(overTheWire(settings).knowledgeBase!)).toEqual({ name: 'trials', settings });
    }
  });
});
