import { v1 } from '@trellis/contracts';
import type { IndexStatus } from '@trellis/contracts';
import type { DocumentRecord, KnowledgeBaseRecord, StageRecord } from '@trellis/storage';

const STATUS: Record<IndexStatus, v1.IndexStatus> = {
  pending: v1.IndexStatus.INDEX_STATUS_PENDING,
  chunked: v1.IndexStatus.INDEX_STATUS_CHUNKED,
  embedded: v1.IndexStatus.INDEX_STATUS_EMBEDDED,
  extracted: v1.IndexStatus.INDEX_STATUS_EXTRACTED,
  graphed: v1.IndexStatus.INDEX_STATUS_GRAPHED,
  failed: v1.IndexStatus.INDEX_STATUS_FAILED,
};

export function toKnowledgeBaseMessage(kb: KnowledgeBaseRecord, documentCount: number): v1.KnowledgeBase {
  const s = kb.settings;
  return {
    id: kb.id,
    name: kb.name,
    description: kb.description,
    chunking: { chunkSizeTokens: s.chunkSizeTokens, chunkOverlapTokens: s.chunkOverlapTokens, splitter: s.splitter },
    models: {
      embeddingModel: s.embeddingModel,
      embeddingDimensions: s.embeddingDimensions,
      llmModel: s.llmModel,
      extractionPromptVersion: s.extractionPromptVersion,
    },
    createdAt: kb.createdAt,
    documentCount,
    resolution: {
      mode: s.resolution?.mode ?? '',
      similarityThreshold: s.resolution?.similarityThreshold ?? 0,
      llmMergeDecisions: s.resolution?.llmMergeDecisions ?? '',
      llmMergeFloor: s.resolution?.llmMergeFloor ?? 0,
      summaryMaxChars: s.resolution?.summaryMaxChars ?? 0,
    },
  };
}

/** Where a document is: derived from its status and its chunks' statuses. */
export function currentStage(status: IndexStatus, chunkCounts: Partial<Record<IndexStatus, number>>): string {
  switch (status) {
    case 'graphed':
      return 'done';
    case 'failed':
      return 'failed';
    case 'pending':
      return 'chunking';
    case 'chunked':
    case 'embedded':
    case 'extracted':
      return (chunkCounts.embedded ?? 0) > 0 ? 'extraction' : 'graph';
  }
}

export function toDocumentMessage(d: DocumentRecord, chunkCounts: Partial<Record<IndexStatus, number>>, unchanged = false, stages: readonly StageRecord[] = []): v1.Document {
  return {
    id: d.id,
    knowledgeBaseId: d.kbId,
    sourceUri: d.sourceUri,
    filename: d.filename,
    mimeType: d.mimeType,
    contentHash: d.contentHash,
    version: d.version,
    status: STATUS[d.status],
    error: d.error ?? '',
    sizeBytes: d.sizeBytes,
    chunkCounts: Object.entries(chunkCounts).map(([status, count]) => ({ status: STATUS[status as IndexStatus], count: count ?? 0 })),
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    metadata: d.metadata,
    unchanged,
    currentStage: currentStage(d.status, chunkCounts),
    stages: stages.map((s) => ({
      name: s.stage,
      startedAt: s.startedAt,
      finishedAt: s.finishedAt,
      durationMs: s.durationMs,
      events: s.events,
      failures: s.failures,
      lastError: s.lastError ?? '',
    })),
  };
}
