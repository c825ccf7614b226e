import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import { LocalHashEmbedder } from '@trellis/models';
import { SqliteStore } from '@trellis/storage';
import type { EntityMentionWrite, RelationshipMentionWrite } from '@trellis/graph';
import { rankPassages } from './passage-graph';

const SETTINGS = { chunkSizeTokens: 0, chunkOverlapTokens: 0, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };

/**
 * A two-hop question over a real store, with a graph as OpenIE gives it (names and triples, no
 * descriptions): the film's passage names the director; the director's birthplace is in a
 * passage that shares no word with the question, last in the dense order. Two distractors
 * resemble the question, two unrelated passages stand for the rest of a corpus: only the
 * walk through the director can lift the birth passage above those.
 */
describe('rankPassages: personalized PageRank over entities and passages', () => {
  const embedder = new LocalHashEmbedder(256);
  let store: SqliteStore;
  let scope: KbScope;
  const question = 'Where was the director of Harbour of Lanterns born?';
  const passages: Record<string, string> = {
    film: 'Harbour of Lanterns is a 1961 film directed by Odile Marchetti.',
    birth: 'Odile Marchetti grew up in Ravensford, a town on the coast.',
    noise1: 'The director of the harbour museum was born in a lighthouse.',
    noise2: 'Lanterns were born along the harbour where the director walked.',
    bread: 'Bread is baked from flour, water and salt.',
    rain: 'Rain fell on the hills all afternoon.',
  };

  const entity = (id: string, name: string): EntityMentionWrite => ({ entityId: id, name, normalizedName: name.toLowerCase(), type: 'x', description: '', embedding: embedder.embedOne(name) });
  const triple = (source: EntityMentionWrite, label: string, target: EntityMentionWrite): RelationshipMentionWrite => ({
    relationshipId: `rel-${source.entityId}-${target.entityId}`,
    sourceId: source.entityId,
    targetId: target.entityId,
    label,
    description: '',
    strength: 1,
    embedding: embedder.embedOne(`${source.name} ${label} ${target.name}`),
  });
  const lanterns = entity('ent-lanterns', 'Harbour of Lanterns');
  const odile = entity('ent-odile', 'Odile Marchetti');
  const ravensford = entity('ent-ravensford', 'Ravensford');
  const lighthouse = entity('ent-lighthouse', 'lighthouse');

  type Extraction = { entities: EntityMentionWrite[]; relationships: RelationshipMentionWrite[] };
  async function index(extractions: Record<string, Extraction>, titles: Record<string, string> = {}): Promise<void> {
    for (const [id, text] of Object.entries(passages)) {
      const title = titles[id] ?? '';
      await store.repositories.documents.saveDocumentVersion(scope, { id: `doc-${id}`, sourceUri: id, filename: id, mimeType: 'text/plain', contentHash: id, version: 1, sizeBytes: text.length, metadata: {}, title, text });
      await store.repositories.chunks.upsertChunks(scope, [{ id, documentId: `doc-${id}`, version: 1, ordinal: 0, text, heading: '', tokenCount: 10, contentHash: id, embedding: embedder.embedOne(text) }]);
      const found = extractions[id];
      if (found) await store.repositories.graphWrites.applyChunkExtraction(scope, id, found.entities, found.relationships);
    }
  }

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'kb', description: '', settings: SETTINGS });
    scope = { tenantId: 't', kbId: kb.id };
  });

  afterEach(async () => {
    await store.close();
  });

  const reads = () => store.repositories;
  const ranked = async (filter?: { documentIds: string[] }) => [...(await rankPassages(reads(), scope, embedder.embedOne(question), question, filter)).passageScores.keys()];
  const dense = async () => (await store.repositories.chunks.searchChunksByVector(scope, embedder.embedOne(question), 10)).map((h) => h.chunk.id);

  it('lifts the second hop, which dense search ranks last, through the entity both passages mention', async () => {
    await index({
      film: { entities: [lanterns, odile], relationships: [triple(odile, 'directed', lanterns)] },
      birth: { entities: [odile, ravensford], relationships: [triple(odile, 'grew up in', ravensford)] },
      noise1: { entities: [lighthouse], relationships: [] },
    });
    expect((await dense()).at(-1)).toBe('birth');

    const order = await ranked();
    expect(order[0]).toBe('film');
    expect(order.indexOf('birth')).toBeLessThan(order.indexOf('rain'));
    expect(order.indexOf('birth')).toBeLessThan(order.indexOf('bread'));
  });

  it('keeps the dense order when there is no graph (the prior)', async () => {
    await index({});
    const order = await ranked();
    expect(order.length).toBeGreaterThan(1);
    expect(order).toEqual((await dense()).slice(0, order.length));
  });

  it('joins two entities of one name that resolution kept apart, and reaches the passage of the other', async () => {
    // The birth passage's "Odile Marchetti" is a separate entity with no relationship to the film.
    const odileAgain = entity('ent-odile-2', 'Odile Marchetti');
    await index({
      film: { entities: [lanterns, odile], relationships: [triple(odile, 'directed', lanterns)] },
      birth: { entities: [odileAgain, ravensford], relationships: [triple(odileAgain, 'grew up in', ravensford)] },
      noise1: { entities: [lighthouse], relationships: [] },
    });
    const order = await ranked();
    expect(order.indexOf('birth')).toBeLessThan(order.indexOf('rain'));
    expect(order.indexOf('birth')).toBeLessThan(order.indexOf('bread'));
  });

  it('reaches the passage about an entity the best passage names, where extraction left no edge to it', async () => {
    // The film passage's extraction ran the director's name into the title ("Harbour of
    // Lanterns Odile"), so no entity, relationship or same-name edge links the two passages.
    // Only the director's name as the film passage writes it leads to the birth passage's entity
    // (no relationship near the question either).
    const garbled = entity('ent-garbled', 'Harbour of Lanterns Odile');
    await index({
      film: { entities: [garbled], relationships: [] },
      birth: { entities: [odile, ravensford], relationships: [] },
      noise1: { entities: [lighthouse], relationships: [] },
    });
    // Asked so that the film passage is the best dense hit, as the first hop of such a question is.
    const asked = 'Which film directed by whom is Harbour of Lanterns, and where were they born?';
    const byVector = (await store.repositories.chunks.searchChunksByVector(scope, embedder.embedOne(asked), 10)).map((h) => h.chunk.id);
    expect(byVector[0]).toBe('film');
    expect(byVector.indexOf('birth')).toBeGreaterThan(byVector.indexOf('rain'));
    const order = [...(await rankPassages(reads(), scope, embedder.embedOne(asked), asked)).passageScores.keys()];
    expect(order.indexOf('birth')).toBeGreaterThan(-1);
    expect(order.indexOf('birth')).toBeLessThan(order.indexOf('rain'));
    expect(order.indexOf('birth')).toBeLessThan(order.indexOf('bread'));
  });

  it('restarts at the page titled by a seed entity, which no mention links to the graph', async () => {
    // The birth passage is the director's own page, but its extraction found nothing: only its
    // document's title ties it to the director the film passage names.
    const extractions = { film: { entities: [lanterns, odile], relationships: [triple(odile, 'directed', lanterns)] }, noise1: { entities: [lighthouse], relationships: [] } };
    await index(extractions);
    // The least similar passage has no dense prior, and nothing else reaches it.
    expect(await ranked()).not.toContain('birth');

    await store.close();
    store = new SqliteStore(':memory:');
    const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'kb', description: '', settings: SETTINGS });
    scope = { tenantId: 't', kbId: kb.id };
    await index(extractions, { birth: 'Odile  Marchetti (director)' });
    const order = await ranked();
    expect(order.indexOf('birth')).toBeLessThan(order.indexOf('rain'));
    expect(order.indexOf('birth')).toBeLessThan(order.indexOf('bread'));
  });

  it('leaves a relationship weighted negative out of the walk', async () => {
    const grewUp = triple(odile, 'grew up in', ravensford);
    await index({
      film: { entities: [lanterns, odile], relationships: [triple(odile, 'directed', lanterns)] },
      birth: { entities: [ravensford], relationships: [] },
      noise1: { entities: [lighthouse], relationships: [] },
    });
    // Only the relationship links Odile to Ravensford's passage.
    await store.repositories.graphWrites.applyChunkExtraction(scope, 'noise2', [odile, ravensford], [grewUp]);
    const walked = async () => (await rankPassages(reads(), scope, embedder.embedOne(question), question)).relationships.map((r) => r.id);
    expect(await walked()).toContain(grewUp.relationshipId);
    await store.repositories.graphEdits.updateRelationship(scope, grewUp.relationshipId, { weight: -1 }, { id: 'e1', actor: 'a', at: new Date().toISOString() });
    expect(await walked()).not.toContain(grewUp.relationshipId);
  });

  it("links none of a hub entity's passages, and never reads its mentions", async () => {
    await index({
      film: { entities: [lanterns, odile], relationships: [triple(odile, 'directed', lanterns)] },
      birth: { entities: [odile, ravensford], relationships: [triple(odile, 'grew up in', ravensford)] },
    });
    // Ravensford is mentioned by 101 passages besides the birth passage: a hub, one more than a walker links.
    const towns = Array.from({ length: 101 }, (_, i) => ({ id: `town-${i}`, text: `Ravensford notes, page ${i}.` }));
    await store.repositories.documents.saveDocumentVersion(scope, { id: 'doc-towns', sourceUri: 'towns', filename: 'towns', mimeType: 'text/plain', contentHash: 'towns', version: 1, sizeBytes: 1, metadata: {}, text: 'towns' });
    await store.repositories.chunks.upsertChunks(scope, towns.map((t, ordinal) => ({ id: t.id, documentId: 'doc-towns', version: 1, ordinal, text: t.text, heading: '', tokenCount: 4, contentHash: t.id, embedding: embedder.embedOne(t.text) })));
    for (const t of towns) await store.repositories.graphWrites.applyChunkExtraction(scope, t.id, [ravensford], []);
    const asked: string[] = [];
    const graphReads = store.repositories.graphReads;
    const counting = Object.assign(Object.create(graphReads) as typeof graphReads, {
      chunkIdsForEntities: (s: KbScope, ids: readonly string[]) => (asked.push(...ids), graphReads.chunkIdsForEntities(s, ids)),
    });
    const result = await rankPassages({ graphReads: counting, chunks: store.repositories.chunks }, scope, embedder.embedOne(question), question);
    expect(result.entityScores.has(ravensford.entityId)).toBe(true);
    expect(asked).toContain(odile.entityId);
    expect(asked).not.toContain(ravensford.entityId);
    // A town passage has a score only as one of the 30 nearest the question (the dense prior), never through the hub.
    const prior = new Set((await store.repositories.chunks.searchChunksByVector(scope, embedder.embedOne(question), 30)).map((h) => h.chunk.id));
    const reached = [...result.passageScores.keys()].filter((id) => id.startsWith('town-'));
    expect(reached.filter((id) => !prior.has(id))).toEqual([]);
    expect(reached.length).toBeLessThan(towns.length);
  });

  it('restarts only at passages of the allowed documents', async () => {
    await index({ film: { entities: [lanterns, odile], relationships: [triple(odile, 'directed', lanterns)] } });
    const order = await ranked({ documentIds: ['doc-noise1'] });
    expect(order).toContain('noise1');
    expect(order).not.toContain('noise2');
  });
});
