import { stableId } from '@trellis/contracts';
import type { KbScope, KbSettings } from '@trellis/contracts';
import type { ResolutionDefaults } from '@trellis/config';
import { SummaryRefresher } from '@trellis/graph';
import type { EmbeddingProvider } from '@trellis/models';
import type { ExtractionResult, TrellisStore } from '@trellis/storage';
import { fakeEmbedding } from '@trellis/testing';
import { EntityResolver } from '../src/entity-resolver';
import { GraphWriterService } from '../src/graph-writer.service';

/** What the community tests index with: bag-of-words vectors, name resolution, default chunking. */
export const embedder: EmbeddingProvider = { model: 'bag-of-words', dimensions: 64, embed: async (texts) => texts.map((t) => Float32Array.from(fakeEmbedding(t, 64))) };
export const DEFAULTS: ResolutionDefaults = { mode: 'name', similarityThreshold: 0.6, llmMergeDecisions: false, llmMergeFloor: 0.4, summaryMaxChars: 2000 };
export const SETTINGS: KbSettings = { chunkSizeTokens: 512, chunkOverlapTokens: 64, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };

/** A group of entities all related to each other, as one document would state them. */
export function topic(names: readonly string[], about: string): ExtractionResult {
  return {
    entities: names.map((name) => ({ name, type: 'thing', description: `${name} is part of ${about}.` })),
    relationships: names.flatMap((a, i) => names.slice(i + 1).map((b) => ({ source: a, target: b, label: 'relates to', description: `${a} and ${b} in ${about}.`, strength: 8 }))),
  };
}

/** Topics that share nothing: each becomes a community of its own. */
export const TOPICS = {
  databases: topic(['TiDB', 'PingCAP', 'TiKV', 'TiFlash', 'MySQL protocol'], 'distributed databases'),
  planets: topic(['Mercury', 'Venus', 'Earth', 'Mars', 'Sun'], 'the solar system'),
  composers: topic(['Bach', 'Leipzig', 'Handel', 'Telemann', 'Baroque music'], 'baroque music'),
  rivers: topic(['Danube', 'Rhine', 'Elbe', 'Vltava', 'Europe'], 'European rivers'),
} satisfies Record<string, ExtractionResult>;

/**
 * Writes a one-chunk document version and its extraction through the real graph writer, as
 * indexing would; resolves to the chunk's id.
 */
export function graphIndexer(store: TrellisStore, scope: KbScope): (documentId: string, extraction: ExtractionResult, version?: number) => Promise<string> {
  const refresher = new SummaryRefresher(store.repositories.graphSummaries, { embed: (texts) => embedder.embed(texts), summarize: null });
  const writer = new GraphWriterService(store.repositories, embedder, new EntityResolver(null), refresher, DEFAULTS, false);
  return async (documentId, extraction, version = 1) => {
    const text = `${documentId} v${version}`;
    await store.repositories.documents.saveDocumentVersion(scope, { id: documentId, sourceUri: documentId, filename: documentId, mimeType: 'text/plain', contentHash: stableId('h', text), version, sizeBytes: 1, metadata: {}, text });
    const chunkId = stableId('chk', scope.kbId, documentId, version, 0);
    await store.repositories.chunks.upsertChunks(scope, [{ id: chunkId, documentId, version, ordinal: 0, text, heading: '', tokenCount: 3, contentHash: stableId('h', text), embedding: (await embedder.embed([text]))[0]! }]);
    const extractionKey = stableId('ext', documentId, version);
    await store.repositories.extractionCache.putCachedExtraction(scope, extractionKey, extraction);
    await writer.onChunkExtracted({ context: { tenantId: scope.tenantId, knowledgeBaseId: scope.kbId, documentId, documentVersion: version, traceparent: '', knowledgeBase: undefined }, chunkId, extractionKey });
    return chunkId;
  };
}
