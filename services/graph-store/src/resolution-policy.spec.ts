import { describe, expect, it } from 'vitest';
import type { ResolutionDefaults } from '@trellis/config';
import { graphPolicy } from './resolution-policy';

const DEFAULTS: ResolutionDefaults = { mode: 'auto', similarityThreshold: 0.6, llmMergeDecisions: false, llmMergeFloor: 0.4, summaryMaxChars: 2000 };

describe('graphPolicy', () => {
  it('resolves by name with the local extractor and by embedding with an LLM when left on auto', () => {
    expect(graphPolicy(undefined, DEFAULTS, false).mode).toBe('name');
    expect(graphPolicy(undefined, DEFAULTS, true)).toEqual({ mode: 'embedding', similarityThreshold: 0.6, llmMergeDecisions: false, llmMergeFloor: 0.4, summaryMaxChars: 2000 });
    expect(graphPolicy(undefined, { ...DEFAULTS, mode: 'embedding' }, false).mode).toBe('embedding');
  });

  it("lets a knowledge base's own settings override the server's", () => {
    const policy = graphPolicy({ mode: 'name', similarityThreshold: 0.9, llmMergeDecisions: 'on', llmMergeFloor: 0.95, summaryMaxChars: 500 }, DEFAULTS, true);
    // The floor never rises above the threshold.
    expect(policy).toEqual({ mode: 'name', similarityThreshold: 0.9, llmMergeDecisions: true, llmMergeFloor: 0.9, summaryMaxChars: 500 });
    expect(graphPolicy({ mode: '', similarityThreshold: 0, llmMergeDecisions: 'off', llmMergeFloor: 0, summaryMaxChars: 0 }, { ...DEFAULTS, llmMergeDecisions: true }, true).llmMergeDecisions).toBe(false);
  });
});
