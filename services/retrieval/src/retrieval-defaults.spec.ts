import { describe, expect, it } from 'vitest';
import { CachingEmbedder, LocalHashEmbedder } from '@trellis/models';
import type { EmbeddingProvider } from '@trellis/models';
import { LEXICAL_DEFAULTS, SEMANTIC_DEFAULTS, retrievalDefaults } from './retrieval-defaults';

describe('retrieval defaults follow the kind of vectors', () => {
  const semantic: EmbeddingProvider = { model: 'local:all-MiniLM-L6-v2', dimensions: 3, embed: async (texts) => texts.map(() => new Float32Array(3)) };

  it('leans on full text and the weighted walk with hash vectors, also behind the embedding cache', () => {
    expect(retrievalDefaults(new LocalHashEmbedder(64))).toBe(LEXICAL_DEFAULTS);
    expect(retrievalDefaults(new CachingEmbedder(new LocalHashEmbedder(64)))).toBe(LEXICAL_DEFAULTS);
    expect(LEXICAL_DEFAULTS.strategy).toBe('weighted');
    // Hash vectors are a weaker full-text hit: the second hop stays full text only.
    expect(LEXICAL_DEFAULTS.denseSecondHop).toBe(false);
  });

  it('weighs dense, full-text and graph rankings alike with a semantic model, and walks passages with ppr', () => {
    expect(retrievalDefaults(semantic)).toBe(SEMANTIC_DEFAULTS);
    expect(retrievalDefaults(new CachingEmbedder(semantic))).toBe(SEMANTIC_DEFAULTS);
    const { vector, fulltext, graph } = SEMANTIC_DEFAULTS.weights;
    expect(new Set([vector, fulltext, graph]).size).toBe(1);
    expect(SEMANTIC_DEFAULTS.strategy).toBe('ppr');
    expect(SEMANTIC_DEFAULTS.denseSecondHop).toBe(true);
  });
});
