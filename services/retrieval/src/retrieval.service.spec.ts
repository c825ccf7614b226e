import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import { LocalHashEmbedder } from '@trellis/models';
import type { ChatMessage, ChatModel, EmbeddingProvider } from '@trellis/models';
import { SqliteStore } from '@trellis/storage';
import type { EntityMentionWrite } from '@trellis/graph';
import type { ChunkRepository, KnowledgeBaseRepository, GraphReadRepository } from '@trellis/storage';
import { RetrievalService } from './retrieval.service';

const SETTINGS = { chunkSizeTokens: 0, chunkOverlapTokens: 0, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };
const QUESTION = 'Who directed the Radium Institute?';
const PASSAGES = [
  'Marie Curie directed the Radium Institute in Paris from its founding.',
  'The Radium Institute was built by the University of Paris and the Pasteur Institute.',
  'Polonium was named after Poland, the native country of Marie Curie.',
];

/** Counts what one Retrieve costs: embeddings of each text, knowledge-base lookups, graph walks. */
class Counting {
  readonly embedded: string[] = [];
  knowledgeBaseLookups = 0;
  /** Every walk starts from the relationships nearest the question. */
  graphSeeds = 0;
  /** Each vector search of chunks: its vector and depth. */
  readonly vectorSearches: Array<{ vector: Float32Array; k: number }> = [];
  readonly prompts: ChatMessage[][] = [];
}

describe('RetrievalService.retrieve: a chat turn is one trip', () => {
  const hash = new LocalHashEmbedder(64);
  let store: SqliteStore;
  let scope: KbScope;
  let counting: Counting;

  const entity = (name: string): EntityMentionWrite => ({ entityId: `ent-${name}`, name, normalizedName: name.toLowerCase(), type: 'x', description: '', embedding: hash.embedOne(name) });

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'kb', description: '', settings: SETTINGS });
    scope = { tenantId: 't', kbId: kb.id };
    await store.repositories.documents.saveDocumentVersion(scope, { id: 'd', sourceUri: 'd.txt', filename: 'd.txt', mimeType: 'text/plain', contentHash: 'h', version: 1, sizeBytes: 1, metadata: {}, text: PASSAGES.join('\n') });
    await store.repositories.chunks.upsertChunks(
      scope,
      PASSAGES.map((text, ordinal) => ({ id: `c${ordinal}`, documentId: 'd', version: 1, ordinal, text, heading: '', tokenCount: 10, contentHash: `h${ordinal}`, embedding: hash.embedOne(text) })),
    );
    const [curie, institute, poland] = [entity('Marie Curie'), entity('Radium Institute'), entity('Poland')];
    await store.repositories.graphWrites.applyChunkExtraction(scope, 'c0', [curie, institute], [
      { relationshipId: 'r-directed', sourceId: curie.entityId, targetId: institute.entityId, label: 'directed', description: 'Marie Curie directed the Radium Institute', strength: 5, embedding: hash.embedOne('Marie Curie directed Radium Institute') },
    ]);
    await store.repositories.graphWrites.applyChunkExtraction(scope, 'c2', [curie, poland], [
      { relationshipId: 'r-born', sourceId: curie.entityId, targetId: poland.entityId, label: 'born in', description: 'Marie Curie was born in Poland', strength: 5, embedding: hash.embedOne('Marie Curie born in Poland') },
    ]);
    counting = new Counting();
  });

  afterEach(async () => {
    await store.close();
  });

  function service(llm: ChatModel | null): RetrievalService {
    const embedder: EmbeddingProvider = {
      model: hash.model,
      dimensions: hash.dimensions,
      embed: (texts) => {
        counting.embedded.push(...texts);
        return hash.embed(texts);
      },
    };
    const knowledgeBases: KnowledgeBaseRepository = new Proxy(store.repositories.knowledgeBases, {
      get: (target, property) => {
        if (property === 'findKnowledgeBase') counting.knowledgeBaseLookups++;
        const value = Reflect.get(target, property) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const graphReads: GraphReadRepository = new Proxy(store.repositories.graphReads, {
      get: (target, property) => {
        if (property === 'searchRelationshipsByVector') counting.graphSeeds++;
        const value = Reflect.get(target, property) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const chunks: ChunkRepository = new Proxy(store.repositories.chunks, {
      get: (target, property) => {
        const value = Reflect.get(target, property) as unknown;
        if (property !== 'searchChunksByVector') return typeof value === 'function' ? value.bind(target) : value;
        return (scope: KbScope, vector: Float32Array, k: number, filter?: unknown) => {
          counting.vectorSearches.push({ vector, k });
          return target.searchChunksByVector(scope, vector, k, filter as never);
        };
      },
    });
    return new RetrievalService({ ...store.repositories, knowledgeBases, graphReads, chunks }, embedder, { llm });
  }

  /** Vector searches of chunks asked for the same vector and depth more than once. */
  const repeatedSearches = () => counting.vectorSearches.filter((a, i) => counting.vectorSearches.findIndex((b) => b.vector === a.vector && b.k === a.k) !== i);

  it('looks the knowledge base up once, embeds the question once and walks the graph once, with the entity refinement', async () => {
    const response = await service(null).retrieve({ tenantId: 't' }, { knowledgeBase: 'kb', query: QUESTION, topK: 2, mode: 'hybrid', depth: 0, history: [] });
    expect(counting.knowledgeBaseLookups).toBe(1);
    expect(counting.embedded.filter((t) => t === QUESTION)).toHaveLength(1);
    expect(counting.graphSeeds).toBe(1);
    // The graph walk's dense prior is hybrid's vector signal: one search, not two.
    expect(counting.vectorSearches.length).toBeGreaterThan(0);
    expect(repeatedSearches()).toEqual([]);
    // The one walk is the context returned, the refinement's input and the chunks' graph signal.
    expect(response.graph!.entities.map((e) => e.name)).toContain('Radium Institute');
    expect(response.refinedQuery).toContain('Marie Curie');
    expect(response.chunks[0]!.text).toContain('directed the Radium Institute');
    expect(response.chunks[0]!.signals.map((s) => s.source)).toContain('graph');
    expect(response.knowledgeBaseId).toBe(scope.kbId);
  });

  it('lets the model refine the question from the graph and the conversation, in the same one call', async () => {
    const llm: ChatModel = {
      model: 'fake',
      complete: async (messages) => {
        counting.prompts.push([...messages]);
        return '"Radium Institute director Marie Curie"';
      },
      stream: () => {
        throw new Error('not streamed');
      },
    };
    const history = [
      { role: 'user', content: 'Tell me about the Radium Institute.' },
      { role: 'assistant', content: 'It is a research institute in Paris.' },
    ];
    const response = await service(llm).retrieve({ tenantId: 't' }, { knowledgeBase: 'kb', query: QUESTION, topK: 2, mode: 'hybrid', depth: 0, refinement: 'model', history });
    expect(response.refinedQuery).toBe('Radium Institute director Marie Curie');
    expect(counting.prompts).toHaveLength(1);
    const prompt = counting.prompts[0]!.map((m) => m.content).join('\n');
    expect(prompt).toContain('Marie Curie -[directed]-> Radium Institute');
    expect(prompt).toContain('assistant: It is a research institute in Paris.');
    expect(counting.knowledgeBaseLookups).toBe(1);
    expect(counting.graphSeeds).toBe(1);
    // The question and its refinement once each, then the second hop's own query (question +
    // names of the best passage), which a semantic embedder searches by vector too.
    expect(counting.embedded).toEqual([QUESTION, 'Radium Institute director Marie Curie', `${QUESTION} Marie Curie Paris`]);
    expect(response.chunks[0]!.signals.map((s) => s.source)).toContain('refined');
  });

  it('refines by entity names when asked for the model but none is configured, and rejects unknown refinements', async () => {
    const response = await service(null).retrieve({ tenantId: 't' }, { knowledgeBase: 'kb', query: QUESTION, topK: 2, mode: 'hybrid', depth: 0, refinement: 'model', history: [] });
    expect(response.refinedQuery).toContain('Marie Curie');
    await expect(service(null).retrieve({ tenantId: 't' }, { knowledgeBase: 'kb', query: QUESTION, topK: 2, mode: '', depth: 0, refinement: 'magic', history: [] })).rejects.toThrow(/unknown refinement "magic"/);
    const long = Array.from({ length: 21 }, () => ({ role: 'user', content: 'x' }));
    await expect(service(null).retrieve({ tenantId: 't' }, { knowledgeBase: 'kb', query: QUESTION, topK: 2, mode: '', depth: 0, history: long })).rejects.toThrow(/more than 20 messages/);
  });

  it('searches chunks by each vector once in RetrieveChunks, though hybrid mode and its graph walk both want the question\'s passages', async () => {
    const response = await service(null).retrieveChunks({ tenantId: 't' }, { knowledgeBase: 'kb', query: QUESTION, topK: 2, mode: 'hybrid', strategy: '', filter: undefined, expansion: '', documentIds: [], additionalKnowledgeBases: [], decompose: false });
    expect(response.chunks[0]!.signals.map((s) => s.source)).toEqual(expect.arrayContaining(['vector', 'graph']));
    expect(counting.vectorSearches.length).toBeGreaterThan(0);
    expect(repeatedSearches()).toEqual([]);
  });
});
