import { yieldToEventLoop } from '@trellis/models';
import { contentHash, stableId, toEventSettings } from '@trellis/contracts';
import type { KbScope, events } from '@trellis/contracts';
import { chunkOutboxEvent } from '@trellis/messaging';
import type { EventOutbox } from '@trellis/messaging';
import { embeddingText, splitOptionsFor, splitTextWithin } from '@trellis/models';
import type { EmbeddingProvider } from '@trellis/models';
import type { NewChunk, TrellisRepositories } from '@trellis/storage';

const EMBED_BATCH = 64;
const DEFAULT_SPLIT_TIMEOUT_MS = 60_000;

/**
 * Handles `document.ingested`: splits the document version into chunks, embeds them in
 * batches, stores them and publishes `chunk.ready` for each, with the knowledge base's settings
 * in the event context for the later stages. Chunk ids derive from
 * (kb, document, version, ordinal), so a replayed event rewrites the same rows.
 */
export class ChunkingService {
  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'documents' | 'chunks'>,
    private readonly outbox: Pick<EventOutbox, 'publishCommitted'>,
    private readonly embedder: EmbeddingProvider,
    /** Time one document's split may take (TRELLIS_PARSE_TIMEOUT_MS). */
    private readonly splitTimeoutMs: number = DEFAULT_SPLIT_TIMEOUT_MS,
  ) {}

  async onDocumentIngested(event: events.DocumentIngested): Promise<void> {
    const ctx = event.context;
    if (!ctx) return;
    const scope: KbScope = { tenantId: ctx.tenantId, kbId: ctx.knowledgeBaseId };
    const document = await this.repos.documents.getDocument(scope, ctx.documentId);
    // A newer version or a deletion supersedes this event.
    if (document === null || document.version !== ctx.documentVersion) return;
    const [kb, text] = await Promise.all([
      this.repos.knowledgeBases.findKnowledgeBase(scope, scope.kbId),
      this.repos.documents.getDocumentText(scope, document.id, document.version),
    ]);
    if (kb === null || text === null) return;

    const pieces = await splitTextWithin(text, splitOptionsFor(kb.settings, document.mimeType), this.splitTimeoutMs);
    const chunks: NewChunk[] = [];
    // One transaction per batch: a large document's chunks written in one would hold the event
    // loop for its whole write and commit (about a second for 3 MB). No chunk is announced
    // before all are stored, and the store recounts the chunks remaining after each batch.
    for (let start = 0; start < pieces.length; start += EMBED_BATCH) {
      if (start > 0) await yieldToEventLoop();
      const batch = pieces.slice(start, start + EMBED_BATCH);
      const vectors = await this.embedder.embed(batch.map(embeddingText));
      const written: NewChunk[] = [];
      batch.forEach((piece, i) => {
        const ordinal = start + i;
        written.push({
          id: stableId('chk', scope.tenantId, scope.kbId, document.id, document.version, ordinal),
          documentId: document.id,
          version: document.version,
          ordinal,
          text: piece.text,
          heading: piece.heading,
          tokenCount: piece.tokenCount,
          contentHash: contentHash(piece.text),
          embedding: vectors[i]!,
        });
      });
      await this.repos.chunks.upsertChunks(scope, written);
      chunks.push(...written);
    }
    // The settings read here travel with the chunks: no later stage reads them per chunk.
    const context = { ...ctx, knowledgeBase: toEventSettings(kb) };
    const announcements = chunks.map((chunk) => chunkOutboxEvent('chunk.ready', { context, chunkId: chunk.id, contentHash: chunk.contentHash }, scope));
    // The status and the chunks' announcements commit together (the outbox), then go out.
    await this.repos.documents.setDocumentStatus(scope, document.id, document.version, 'embedded', null, announcements);
    await this.outbox.publishCommitted(announcements);
  }

  /** Called when the event is dead-lettered: the document shows the error in its status. */
  async onFailure(event: events.DocumentIngested, error: Error): Promise<void> {
    const ctx = event.context;
    if (!ctx) return;
    await this.repos.documents.setDocumentStatus({ tenantId: ctx.tenantId, kbId: ctx.knowledgeBaseId }, ctx.documentId, ctx.documentVersion, 'failed', `chunking failed: ${error.message}`);
  }
}
