import { describe, expect, it } from 'vitest';
import { toEventSettings } from '@trellis/contracts';
import type { KbSettings } from '@trellis/contracts';
import { knowledgeBaseOfEvent } from './lookups';

const STORED: KbSettings = { chunkSizeTokens: 256, chunkOverlapTokens: 32, splitter: 'markdown', embeddingModel: 'local-hash-v1', embeddingDimensions: 384, llmModel: '', extractionPromptVersion: 'v3' };
const CARRIED: KbSettings = { ...STORED, llmModel: 'gpt-4o-mini', resolution: { mode: 'name', similarityThreshold: 0.75, llmMergeDecisions: 'off', llmMergeFloor: 0.5, summaryMaxChars: 400 } };

describe('the knowledge base of an indexing event', () => {
  it('is what the event carries, without reading the store; an event without it reads it', async () => {
    let reads = 0;
    const knowledgeBases = {
      findKnowledgeBase: async () => {
        reads++;
        return { id: 'kb', tenantId: 't', name: 'stored', description: '', settings: STORED, createdAt: '' };
      },
    };
    const context = { tenantId: 't', knowledgeBaseId: 'kb', documentId: 'd', documentVersion: 1, traceparent: '', knowledgeBase: toEventSettings({ name: 'trials', settings: CARRIED }) };
    expect(await knowledgeBaseOfEvent(context, knowledgeBases)).toEqual({ name: 'trials', settings: CARRIED });
    expect(reads).toBe(0);
    expect((await knowledgeBaseOfEvent({ ...context, knowledgeBase: undefined }, knowledgeBases))?.settings).toEqual(STORED);
    expect(reads).toBe(1);
  });
});
