import type { ExtractionSettings } from '@trellis/contracts';
import { describe, expect, it } from 'vitest';
import { EXTRACTION_PROMPT_VERSION, extractionPrompt } from './extraction-prompt';

const CUSTOM: ExtractionSettings = { entityTypes: ['drug', 'disease'], instructions: 'Clinical facts only.', examples: 'Text: ...', gleaningPasses: 0, outputMode: 'auto' };

describe('extractionPrompt', () => {
  it('is the domain-neutral default without overrides', () => {
    const prompt = extractionPrompt({ extractionPromptVersion: '' });
    expect(prompt.version).toBe(EXTRACTION_PROMPT_VERSION);
    expect(prompt.system).not.toMatch(/database|TiDB/i);
    expect(extractionPrompt({ extractionPromptVersion: '', extraction: { ...CUSTOM, entityTypes: [], instructions: '', examples: '' } }).version).toBe(EXTRACTION_PROMPT_VERSION);
  });

  it('puts entity types, instructions and examples in the system prompt', () => {
    const prompt = extractionPrompt({ extractionPromptVersion: '', extraction: CUSTOM });
    expect(prompt.system).toContain('Use only these entity types: drug, disease');
    expect(prompt.system).toContain('Clinical facts only.');
    expect(prompt.system).toContain('Examples:\nText: ...');
  });

  it('changes its version whenever the effective prompt changes, and only then', () => {
    const version = (extraction: ExtractionSettings, promptVersion = '') => extractionPrompt({ extractionPromptVersion: promptVersion, extraction }).version;
    const base = version(CUSTOM);
    expect(base).not.toBe(EXTRACTION_PROMPT_VERSION);
    expect(version({ ...CUSTOM })).toBe(base);
    const variants = [
      version({ ...CUSTOM, entityTypes: ['drug'] }),
      version({ ...CUSTOM, instructions: 'Other.' }),
      version({ ...CUSTOM, examples: 'Text: other' }),
      version({ ...CUSTOM, gleaningPasses: 1 }),
      version(CUSTOM, 'bumped'),
    ];
    expect(new Set([base, ...variants]).size).toBe(6);
    // The output mode changes how JSON is requested, not what is asked.
    expect(version({ ...CUSTOM, outputMode: 'json_object' })).toBe(base);
  });
});
