import { createHash } from 'node:crypto';
import { EmbedderInFront } from './embedding-provider';
import type { EmbeddingProvider } from './embedding-provider';

/**
 * Remembers the vectors of recently embedded texts by (model, text hash), so a text that comes
 * back — an entity name in every chunk that mentions it, a summary recomputed unchanged, a
 * repeated question — is embedded once. Bounded by the bytes of its vectors (16 MiB: about
 * 11,000 vectors of 384 dimensions), the least recently used going first: a cap of 50,000
 * entries held 77 MB of vectors, a tenth of a standalone server at 10k passages, for texts
 * that mostly never come back. Texts asked for twice in one call are embedded once too.
 */
export class CachingEmbedder extends EmbedderInFront {
  private readonly entries = new Map<string, Float32Array>();
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(
    inner: EmbeddingProvider,
    private readonly maxBytes = 16 * 1024 * 1024,
  ) {
    super(inner);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const keys = texts.map((text) => createHash('sha1').update(this.inner.model).update('\0').update(text).digest('base64'));
    // The vectors already cached are taken now: calls that run while this one waits for the
    // model may evict them.
    const found = new Map<string, Float32Array>();
    const missing = new Map<string, string>();
    keys.forEach((key, i) => {
      const cached = this.entries.get(key);
      if (cached) found.set(key, cached);
      else missing.set(key, texts[i]!);
    });
    this.hits += texts.length - missing.size;
    this.misses += missing.size;
    if (missing.size > 0) {
      const vectors = await this.inner.embed([...missing.values()]);
      [...missing.keys()].forEach((key, i) => found.set(key, vectors[i]!));
    }
    return keys.map((key) => {
      const vector = found.get(key)!;
      this.remember(key, vector);
      return vector;
    });
  }

  private remember(key: string, vector: Float32Array): void {
    this.forget(key);
    this.entries.set(key, vector);
    this.bytes += vector.byteLength;
    while (this.bytes > this.maxBytes) this.forget(this.entries.keys().next().value!);
  }

  private forget(key: string): void {
    const vector = this.entries.get(key);
    if (vector === undefined) return;
    this.entries.delete(key);
    this.bytes -= vector.byteLength;
  }
}
