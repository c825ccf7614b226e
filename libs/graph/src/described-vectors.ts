/** What an entity or relationship is embedded from. */
export interface DescribedItem {
  /** "name (type)" for an entity, "source label target" for a relationship. */
  readonly heading: string;
  /** What its mentions say about it (the sentences they come from), or its written summary. */
  readonly descriptions: readonly string[];
}

/**
 * Embeds entities and relationships from their parts: the heading, which says what the item
 * is, and its descriptions, which say the context it appears in. The vector is the mean of the
 * parts' unit vectors weighted by their length, normalised: how the encoder's mean pooling
 * weighs the parts of "heading: descriptions" embedded whole, and how it already averages the
 * windows of a text longer than it can read at once.
 *
 * Every distinct text is embedded once per call and, behind the caching embedder, once per
 * process. That is what makes the graph affordable with a real model: the local extractor
 * gives every entity and relationship of a sentence that sentence as its description, so
 * embedding "heading: description" whole embedded the same sentence once per entity and
 * relationship in it, and again in every summary that grew by one sentence. Here a sentence is
 * embedded once and headings are a few tokens.
 */
export async function embedDescribed(embed: (texts: readonly string[]) => Promise<Float32Array[]>, items: readonly DescribedItem[]): Promise<Float32Array[]> {
  const texts = [...new Set(items.flatMap((item) => [item.heading, ...item.descriptions.filter((d) => d !== '')]))];
  if (texts.length === 0) return [];
  const embedded = await embed(texts);
  // A text's length is taken once, however many items share it (a sentence is the description
  // of every entity and relationship in it).
  const partOf = new Map(texts.map((text, i) => [text, { vector: embedded[i]!, length: lengthOf(embedded[i]!) || 1 }]));
  const dimensions = embedded[0]!.length;
  return items.map((item) => {
    const out = new Float32Array(dimensions);
    for (const text of [item.heading, ...item.descriptions.filter((d) => d !== '')]) {
      const part = partOf.get(text)!;
      addScaled(out, part.vector, Math.max(1, text.length) / part.length);
    }
    return unit(out);
  });
}

function addScaled(target: Float32Array, vector: Float32Array, scale: number): void {
  for (let d = 0; d < target.length; d++) target[d]! += vector[d]! * scale;
}

function unit(vector: Float32Array): Float32Array {
  const norm = lengthOf(vector);
  if (norm > 0) for (let d = 0; d < vector.length; d++) vector[d]! /= norm;
  return vector;
}

function lengthOf(vector: Float32Array): number {
  let sum = 0;
  for (let d = 0; d < vector.length; d++) sum += vector[d]! * vector[d]!;
  return Math.sqrt(sum);
}
