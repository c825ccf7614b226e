import type { KbScope } from '@trellis/contracts';
import type { ChunkFilter, ChunkRepository } from '@trellis/storage';

/** The chunk reads retrieval makes for one question. */
export type QuestionChunkReads = Pick<ChunkRepository, 'getChunks' | 'searchChunksByVector' | 'searchChunksFullText' | 'chunkIdsOfDocumentsTitled'>;

/**
 * The chunk reads of one question, each distinct vector search run once: hybrid mode's vector
 * signal and the graph walk's dense prior ask for the same passages (the question's vector,
 * as deep, with the same filter), and at 100k chunks each search scans every vector. Made per
 * question and dropped with it, so no result outlives a write. A search is the same when its
 * scope, vector (the same array), depth and documents are.
 */
export function sharedVectorSearch(chunks: QuestionChunkReads): QuestionChunkReads {
  const searches = new Map<Float32Array, Map<string, ReturnType<ChunkRepository['searchChunksByVector']>>>();
  return {
    getChunks: (scope, ids) => chunks.getChunks(scope, ids),
    searchChunksFullText: (scope, query, k, filter) => chunks.searchChunksFullText(scope, query, k, filter),
    chunkIdsOfDocumentsTitled: (scope, keys, limit) => chunks.chunkIdsOfDocumentsTitled(scope, keys, limit),
    searchChunksByVector: (scope, vector, k, filter) => {
      const ofVector = searches.get(vector) ?? new Map();
      searches.set(vector, ofVector);
      const key = searchKey(scope, k, filter);
      let search = ofVector.get(key);
      if (search === undefined) {
        search = chunks.searchChunksByVector(scope, vector, k, filter);
        ofVector.set(key, search);
      }
      return search;
    },
  };
}

function searchKey(scope: KbScope, k: number, filter: ChunkFilter | undefined): string {
  return JSON.stringify([scope.tenantId, scope.kbId, k, [...(filter?.documentIds ?? [])].sort()]);
}
