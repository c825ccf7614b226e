import { describe, expect, it } from 'vitest';
import { embedDescribed, entityHeading, relationshipItem } from './described-vectors';

/** Each text points along its own axis, scaled by 3 (embedDescribed must not depend on the scale). */
function axisEmbedder(axes: readonly string[]) {
  const calls: string[][] = [];
  const embed = async (texts: readonly string[]) => {
    calls.push([...texts]);
    return texts.map((t) => {
      const v = new Float32Array(axes.length);
      v[axes.indexOf(t)] = 3;
      return v;
    });
  };
  return { calls, embed };
}

describe('embedDescribed', () => {
  it('embeds every distinct heading and description once, however many items share them', async () => {
    const sentence = 'Marie Curie discovered polonium in Paris.';
    const { calls, embed } = axisEmbedder(['Marie Curie (person)', 'Paris (place)', 'Marie Curie discovered Paris', sentence]);
    const vectors = await embedDescribed(embed, [
      { heading: 'Marie Curie (person)', descriptions: [sentence] },
      { heading: 'Paris (place)', descriptions: [sentence] },
      { heading: 'Marie Curie discovered Paris', descriptions: [sentence] },
    ]);
    expect(calls).toEqual([['Marie Curie (person)', sentence, 'Paris (place)', 'Marie Curie discovered Paris']]);
    expect(vectors).toHaveLength(3);
  });

  it('weighs heading and descriptions by their length, as mean pooling of the whole text would', async () => {
    const { embed } = axisEmbedder(['ab', 'abcdef', 'abcdefgh']);
    const [vector] = await embedDescribed(embed, [{ heading: 'ab', descriptions: ['abcdef', 'abcdefgh', ''] }]);
    const norm = Math.hypot(2, 6, 8);
    expect([...vector!].map((v) => v.toFixed(4))).toEqual([2 / norm, 6 / norm, 8 / norm].map((v) => v.toFixed(4)));
  });

  it('gives an item with no description its heading alone, and nothing for no items', async () => {
    const { calls, embed } = axisEmbedder(['Hint (concept)']);
    expect([...(await embedDescribed(embed, [{ heading: 'Hint (concept)', descriptions: [] }]))[0]!]).toEqual([1]);
    expect(await embedDescribed(embed, [])).toEqual([]);
    expect(calls).toHaveLength(1);
  });

  it("makes a relationship's heading from its ends' headings and its label, which the chunk's entities embed anyway", async () => {
    const sentence = 'Marie Curie discovered polonium.';
    const curie = { name: 'Marie Curie', type: 'person' };
    const polonium = { name: 'polonium', type: 'element' };
    const { calls, embed } = axisEmbedder([entityHeading(curie.name, curie.type), entityHeading(polonium.name, polonium.type), 'discovered', sentence]);
    const relationship = relationshipItem(curie, 'discovered', polonium, [sentence]);
    expect(relationship.heading).toBe('Marie Curie discovered polonium');
    const [, , vector] = await embedDescribed(embed, [
      { heading: 'Marie Curie (person)', descriptions: [sentence] },
      { heading: 'polonium (element)', descriptions: [sentence] },
      relationship,
    ]);
    // No text of its own: the model is asked for the two entity headings, the sentence and the label.
    expect(calls).toEqual([['Marie Curie (person)', sentence, 'polonium (element)', 'discovered']]);
    // The heading weighs by its own length (31 characters), spread evenly over its three parts;
    // the sentence by its length (32).
    const part = 31 / Math.sqrt(3);
    const norm = Math.hypot(part, part, part, 32);
    expect([...vector!].map((v) => v.toFixed(4))).toEqual([part / norm, part / norm, part / norm, 32 / norm].map((v) => v.toFixed(4)));
  });
});
