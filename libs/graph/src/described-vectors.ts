/** What an entity or relationship is embedded from. */
export interface DescribedItem {
  /** "name (type)" for an entity, "source label target" for a relationship. */
  readonly heading: string;
  /**
   * Texts whose vectors, averaged, stand for the heading's in place of the heading embedded
   * itself (relationshipItem). The heading still weighs by its own length.
   */
  readonly headingParts?: readonly string[];
  /** What its mentions say about it (the sentences they come from), or its written summary. */
  readonly descriptions: readonly string[];
}

/** The heading an entity is embedded under, and the name of its part in its relationships' vectors. */
export function entityHeading(name: string, type: string): string {
  return `${name} (${type})`;
}

/**
 * A relationship to embed. Its heading's vector is the mean of its ends' entity headings and
 * its label, not "source label target" embedded as a text of its own: those are texts the
 * graph embeds anyway (every entity of a chunk is embedded under its heading, and labels are
 * few), so a relationship costs the model nothing beyond its descriptions. Relationship
 * headings were 16 of the 30 texts, and about a third of the tokens, that a hotpotqa passage's
 * graph write sent to the local model.
 */
export function relationshipItem(source: EntityName, label: string, target: EntityName, descriptions: readonly string[]): DescribedItem {
  return {
    heading: `${source.name} ${label} ${target.name}`,
    headingParts: [entityHeading(source.name, source.type), label, entityHeading(target.name, target.type)],
    descriptions,
  };
}

/** An entity as a relationship names it. */
export interface EntityName {
  readonly name: string;
  readonly type: string;
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
  const headingTexts = (item: DescribedItem) => item.headingParts ?? [item.heading];
  const texts = [...new Set(items.flatMap((item) => [...headingTexts(item), ...item.descriptions.filter((d) => d !== '')]))];
  if (texts.length === 0) return [];
  const embedded = await embed(texts);
  // A text's vector is made unit once, however many items share it (a sentence is the
  // description of every entity and relationship in it).
  const unitOf = new Map(texts.map((text, i) => [text, unit(Float32Array.from(embedded[i]!))]));
  const dimensions = embedded[0]!.length;
  return items.map((item) => {
    const out = new Float32Array(dimensions);
    const heading = new Float32Array(dimensions);
    for (const text of headingTexts(item)) addScaled(heading, unitOf.get(text)!, 1);
    addScaled(out, unit(heading), Math.max(1, item.heading.length));
    for (const text of item.descriptions.filter((d) => d !== '')) addScaled(out, unitOf.get(text)!, Math.max(1, text.length));
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
