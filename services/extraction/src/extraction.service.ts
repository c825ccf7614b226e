import { toEventSettings, TrellisError } from '@trellis/contracts';
import { extractionCacheKey } from '@trellis/models';
import type { events, KbScope, KbSettings } from '@trellis/contracts';
import { chunkOutboxEvent } from '@trellis/messaging';
import type { EventOutbox } from '@trellis/messaging';
import { estimateCost } from '@trellis/observability';
import { knowledgeBaseOfEvent } from '@trellis/storage';
import type { LlmPriceTable } from '@trellis/observability';
import { NO_LLM_USAGE } from '@trellis/storage';
import type { LlmUsage, TrellisRepositories } from '@trellis/storage';
import type { Extractor } from './extractor';
import { ExtractionReport } from './extraction-report';
import type { BudgetGate } from './budget/budget-gate';

/** Where extraction reports what it did, for metrics; knowledge bases by name. */
export interface ExtractionTelemetry {
  extracted(knowledgeBase: string, report: ExtractionReport, usage: LlmUsage): void;
  cacheHit(knowledgeBase: string): void;
  /** A chunk's LLM extraction waits for the knowledge base's budget. */
  pausedChunk(knowledgeBase: string): void;
}

/** Picks the extractor for a knowledge base's settings. */
export interface ExtractorSource {
  forKnowledgeBase(settings: KbSettings): Extractor;
}

/**
 * Handles `chunk.ready`: extracts the chunk's entities and relationships with its knowledge
 * base's extractor (chosen by the settings the event carries), or takes them from the tenant's
 * cache keyed by (content hash, model, prompt version), records what the LLM work cost for the
 * document, and publishes `chunk.extracted`. While the knowledge base's LLM budget is spent, a
 * chunk that would need an LLM call is put on the paused list instead (BudgetResumer announces
 * it again when the budget allows); cached and local extraction go on.
 */
export class ExtractionService {
  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'documents' | 'chunks' | 'extractionCache' | 'llmUsage' | 'budgetPauses'>,
    private readonly outbox: Pick<EventOutbox, 'publishCommitted'>,
    private readonly extractors: ExtractorSource,
    private readonly prices: LlmPriceTable = new Map(),
    private readonly telemetry?: ExtractionTelemetry,
    private readonly budget?: Pick<BudgetGate, 'exhausted'>,
  ) {}

  async onChunkReady(event: events.ChunkReady): Promise<void> {
    const ctx = event.context;
    if (!ctx) throw TrellisError.invalid('chunk.ready event without context');
    const scope: KbScope = { tenantId: ctx.tenantId, kbId: ctx.knowledgeBaseId };
    const chunk = await this.repos.chunks.getChunk(scope, event.chunkId);
    // The chunk belongs to a version that was replaced or deleted meanwhile.
    if (chunk === null) return;
    const kb = await knowledgeBaseOfEvent(ctx, this.repos.knowledgeBases);
    if (kb === null) return;
    // Passed on to graph-store, also when this event came without them.
    const context = ctx.knowledgeBase ? ctx : { ...ctx, knowledgeBase: toEventSettings(kb) };
    const extractor = this.extractors.forKnowledgeBase(kb.settings);
    const key = extractionCacheKey(chunk.contentHash, extractor.model, extractor.promptVersion);
    const cached = await this.repos.extractionCache.getCachedExtraction(scope, key);
    if (cached === null) {
      if (extractor.usesLlm && this.budget !== undefined && (await this.budget.exhausted(scope)) !== null) {
        await this.repos.budgetPauses.pauseChunk(scope, { chunkId: chunk.id, documentId: ctx.documentId, version: ctx.documentVersion, contentHash: chunk.contentHash });
        this.telemetry?.pausedChunk(kb.name);
        return;
      }
      const report = new ExtractionReport();
      const result = await extractor.extract(chunk.text, { heading: chunk.heading }, report);
      await this.repos.extractionCache.putCachedExtraction(scope, key, result);
      const usage: LlmUsage = {
        calls: report.calls,
        inputTokens: report.inputTokens,
        outputTokens: report.outputTokens,
        estimatedCostUsd: estimateCost(this.prices, extractor.model, report.inputTokens, report.outputTokens),
        cacheHits: 0,
      };
      if (usage.calls > 0) await this.repos.llmUsage.addLlmUsage(scope, ctx.documentId, ctx.documentVersion, { ...usage, countedInputTokens: report.countedInputTokens }, 'extraction');
      this.telemetry?.extracted(kb.name, report, usage);
    } else {
      // Written by another knowledge base of the tenant: this one keeps its own copy, so the
      // entry stays while this knowledge base uses it and goes when this one is deleted.
      if (cached.kbId !== scope.kbId) await this.repos.extractionCache.putCachedExtraction(scope, key, cached.result);
      await this.repos.llmUsage.addLlmUsage(scope, ctx.documentId, ctx.documentVersion, { ...NO_LLM_USAGE, cacheHits: 1 }, 'extraction');
      this.telemetry?.cacheHit(kb.name);
    }
    // The status and the announcement commit together (the outbox), then go out.
    const announcement = chunkOutboxEvent('chunk.extracted', { context, chunkId: chunk.id, extractionKey: key }, scope);
    await this.repos.chunks.setChunkStatus(scope, chunk.id, 'extracted', null, [announcement]);
    await this.outbox.publishCommitted([announcement]);
  }

  async onFailure(event: events.ChunkReady, error: Error): Promise<void> {
    const ctx = event.context;
    if (!ctx) return;
    const scope: KbScope = { tenantId: ctx.tenantId, kbId: ctx.knowledgeBaseId };
    await this.repos.chunks.setChunkStatus(scope, event.chunkId, 'failed', `extraction failed: ${error.message}`);
    await this.repos.documents.setDocumentStatus(scope, ctx.documentId, ctx.documentVersion, 'failed', `extraction of chunk ${event.chunkId} failed: ${error.message}`);
  }
}
