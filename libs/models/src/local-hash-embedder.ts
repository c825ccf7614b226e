import type { EmbeddingProvider } from './embedding-provider';

const STOPWORDS = new Set(
  'a an and are as at be but by for from had has have he her hers him his i if in into is it its me my of on or our she so than that the their them then there these they this those to was we were what when where which while who whom why will with you your'.split(' '),
);

/**
 * A deterministic embedding that needs no model download: word unigrams and bigrams plus
 * character trigrams, hashed into a fixed number of signed buckets, log-scaled and
 * L2-normalised. It captures lexical overlap (shared words, shared word pieces, spelling
 * variants), not meaning: synonyms and paraphrases are not close. Good enough to try Trellis
 * offline; plug a real model through OPENAI_BASE_URL for semantic search.
 */
export class LocalHashEmbedder implements EmbeddingProvider {
  readonly model: string;
  readonly lexical = true;

  constructor(readonly dimensions = 512) {
    this.model = `local-hash-v1-${dimensions}`;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions);
    const counts = new Map<string, number>();
    const add = (feature: string, weight: number) => counts.set(feature, (counts.get(feature) ?? 0) + weight);
    const words = (text.toLowerCase().normalize('NFKD').replace(/[\u0300-\u036f]/g, '').match(/[\p{L}\p{N}]+/gu) ?? []).filter(
      (w) => !STOPWORDS.has(w),
    );
    for (let i = 0; i < words.length; i++) {
      const word = words[i]!;
      add(`w:${stem(word)}`, 1);
      if (i + 1 < words.length) add(`b:${stem(word)} ${stem(words[i + 1]!)}`, 0.7);
      const padded = `<${word}>`;
      for (let j = 0; j + 3 <= padded.length; j++) add(`c:${padded.slice(j, j + 3)}`, 0.25);
    }
    for (const [feature, count] of counts) {
      const h = fnv1a(feature);
      const index = h % this.dimensions;
      const sign = (h >>> 31) === 0 ? 1 : -1;
      vector[index]! += sign * (1 + Math.log(count));
    }
    let norm = 0;
    for (const v of vector) norm += v * v;
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
    return vector;
  }
}

/** A light suffix stripper so "founded"/"founding"/"founder" share a feature. */
function stem(word: string): string {
  if (word.length <= 4) return word;
  for (const suffix of ['ations', 'ation', 'ings', 'ing', 'edly', 'ed', 'ies', 'es', 's', 'ly']) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) return word.slice(0, -suffix.length);
  }
  return word;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
