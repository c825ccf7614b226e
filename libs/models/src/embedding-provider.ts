/** Turns texts into vectors. Implementations must be deterministic for the same model. */
export interface EmbeddingProvider {
  /** Model identity stored with the vectors, e.g. "local-hash-v1" or "openai:text-embedding-3-small". */
  readonly model: string;
  readonly dimensions: number;
  /**
   * True when the vectors encode words rather than meaning (the hash fallback): similar
   * vectors then mean shared words, which full-text search ranks better, and retrieval leans
   * on full text.
   */
  readonly lexical?: boolean;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** An embedder in front of another (a cache, a request packer): the same model, dimensions and kind of vectors. */
export abstract class EmbedderInFront implements EmbeddingProvider {
  constructor(protected readonly inner: EmbeddingProvider) {}

  get model(): string {
    return this.inner.model;
  }

  get dimensions(): number {
    return this.inner.dimensions;
  }

  get lexical(): boolean | undefined {
    return this.inner.lexical;
  }

  abstract embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** The provider's own name of an embedding model ("text-embedding-3-small" of "openai:text-embedding-3-small"): what prices are listed under. */
export function providerModelName(identity: string): string {
  return identity.startsWith('openai:') ? identity.slice('openai:'.length) : identity;
}

/** Cosine similarity of two vectors of the same length; 0 when either is all zeros. */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
