import { TrellisError, stableId } from '@trellis/contracts';
import type { KbScope, events } from '@trellis/contracts';
import type { EventBus } from '@trellis/messaging';
import type { TrellisStore } from '@trellis/storage';
import type { Extractor } from './extractor';

/**
 * Handles `chunk.ready`: extracts the chunk's entities and relationships, or takes them from
 * the cache keyed by (content hash, model, prompt version), and publishes `chunk.extracted`.
 */
export class ExtractionService {
  constructor(
    private readonly store: TrellisStore,
    private readonly bus: EventBus,
    private readonly extractor: Extractor,
  ) {}

  async onChunkReady(event: events.ChunkReady): Promise<void> {
    const ctx = event.context;
    if (!ctx) throw TrellisError.invalid('chunk.ready event without context');
    const scope: KbScope = { tenantId: ctx.tenantId, kbId: ctx.knowledgeBaseId };
    const chunk = await this.store.getChunk(scope, event.chunkId);
    // The chunk belongs to a version that was replaced or deleted meanwhile.
    if (chunk === null) return;
    const key = stableId('ext', chunk.contentHash, this.extractor.model, this.extractor.promptVersion);
    if ((await this.store.getCachedExtraction(key)) === null) {
      const result = await this.extractor.extract(chunk.text, { heading: chunk.heading });
      await this.store.putCachedExtraction(key, result);
    }
    await this.store.setChunkStatus(scope, chunk.id, 'extracted');
    await this.bus.publish('chunk.extracted', ctx.documentId, { context: ctx, chunkId: chunk.id, extractionKey: key }, {
      'trellis-tenant': scope.tenantId,
      'trellis-kb': scope.kbId,
    });
  }

  async onFailure(event: events.ChunkReady, error: Error): Promise<void> {
    const ctx = event.context;
    if (!ctx) return;
    const scope: KbScope = { tenantId: ctx.tenantId, kbId: ctx.knowledgeBaseId };
    await this.store.setChunkStatus(scope, event.chunkId, 'failed', `extraction failed: ${error.message}`);
    await this.store.setDocumentStatus(scope, ctx.documentId, ctx.documentVersion, 'failed', `extraction of chunk ${event.chunkId} failed: ${error.message}`);
  }
}
