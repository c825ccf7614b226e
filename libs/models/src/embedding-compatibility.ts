import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { EmbeddingProvider } from './embedding-provider';

/** What a knowledge base records about the model its vectors were made with. */
export interface RecordedEmbedding {
  readonly name: string;
  readonly settings: { readonly embeddingModel: string; readonly embeddingDimensions: number };
}

/**
 * Vectors of different models live in different spaces: a knowledge base whose vectors were
 * made by another model than the one this server embeds with cannot take new vectors, and
 * its vector search means nothing until it is re-indexed. An empty record (a knowledge base
 * from before models were recorded) takes the server's model on its next write.
 */
export function vectorsCompatible(kb: RecordedEmbedding, embedder: Pick<EmbeddingProvider, 'model'>): boolean {
  return kb.settings.embeddingModel === '' || kb.settings.embeddingModel === embedder.model;
}

/** FAILED_PRECONDITION for a write into a knowledge base of another embedding model. */
export function assertVectorsCompatible(kb: RecordedEmbedding, embedder: Pick<EmbeddingProvider, 'model'>): void {
  if (vectorsCompatible(kb, embedder)) return;
  throw new TrellisError(
    ErrorCode.FailedPrecondition,
    `knowledge base "${kb.name}" holds vectors of embedding model ${kb.settings.embeddingModel}, but this server embeds with ${embedder.model}: ` +
      `run \`trellis reindex ${kb.name}\` to re-embed it (queries are served by full text until then)`,
  );
}
