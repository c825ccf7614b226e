import { chunkingAndModelMessages, extractionFromMessage, resolutionFromMessage, toExtractionMessage, toResolutionMessage, TrellisError, v1 } from '@trellis/contracts';
import type { ExtractionSettings, IndexStatus, LlmBudgetSettings, ResolutionSettings } from '@trellis/contracts';
import type { BudgetState } from '@trellis/models';
import { NO_LLM_USAGE } from '@trellis/storage';
import type { IngestEstimate } from '../estimate/ingest-estimator';
import type { PageResult } from '../site/site-crawler';
import type { DocumentRecord, KnowledgeBaseRecord, LlmUsage, StageRecord } from '@trellis/storage';

const STATUS: Record<IndexStatus, v1.IndexStatus> = {
  pending: v1.IndexStatus.INDEX_STATUS_PENDING,
  chunked: v1.IndexStatus.INDEX_STATUS_CHUNKED,
  embedded: v1.IndexStatus.INDEX_STATUS_EMBEDDED,
  extracted: v1.IndexStatus.INDEX_STATUS_EXTRACTED,
  graphed: v1.IndexStatus.INDEX_STATUS_GRAPHED,
  failed: v1.IndexStatus.INDEX_STATUS_FAILED,
};

/** A status filter of a request: undefined for unspecified; a value this server does not know is INVALID_ARGUMENT. */
export function fromStatusMessage(status: v1.IndexStatus | undefined): IndexStatus | undefined {
  if (status === undefined || status === v1.IndexStatus.INDEX_STATUS_UNSPECIFIED) return undefined;
  const known = (Object.keys(STATUS) as IndexStatus[]).find((s) => STATUS[s] === status);
  if (known === undefined) throw TrellisError.invalid(`status ${String(status)} is not an index status`);
  return known;
}


/** The extraction settings of a request; undefined when the request carries none. */
export function fromExtractionMessage(message: v1.ExtractionSettings | undefined | null): Partial<ExtractionSettings> | undefined {
  // The gRPC loader gives null for an absent message field.
  return message === undefined || message === null ? undefined : extractionFromMessage(message);
}

/** The LLM budget of a request; undefined when the request carries none. */
export function fromBudgetMessage(message: v1.LlmBudget | undefined | null): LlmBudgetSettings | undefined {
  if (message === undefined || message === null) return undefined;
  return { dailyTokens: Number(message.dailyTokens), monthlyTokens: Number(message.monthlyTokens), dailyUsd: message.dailyUsd, monthlyUsd: message.monthlyUsd };
}

export function toBudgetStatusMessage(state: BudgetState, pausedChunks: number): v1.LlmBudgetStatus {
  return { budget: { ...state.budget }, today: { ...state.today }, thisMonth: { ...state.thisMonth }, exhausted: state.exhausted, pausedChunks, resetsAt: state.resetsAt };
}

export function toEstimateMessage(e: IngestEstimate): v1.IngestEstimate {
  return {
    files: e.files.map((f) => ({ ...f })),
    chunks: e.chunks,
    chunkTokens: e.chunkTokens,
    extraction: { ...e.extraction },
    summaries: { ...e.summaries },
    embeddings: { ...e.embeddings },
    totalTokens: e.totalTokens,
    totalCostUsd: e.totalCostUsd,
    llmModel: e.llmModel,
    embeddingModel: e.embeddingModel,
    outputBasis: e.outputBasis,
    // Paused chunks are not the estimate's business: the knowledge base's status shows them.
    budget: toBudgetStatusMessage(e.budget, 0),
    budgetWarning: e.budgetWarning,
  };
}

export function toKnowledgeBaseMessage(
  kb: KnowledgeBaseRecord,
  documentCount: number,
  server: v1.ServerEmbedding,
  llmUsage: LlmUsage = NO_LLM_USAGE,
  budget?: v1.LlmBudgetStatus,
): v1.KnowledgeBase {
  const s = kb.settings;
  return {
    id: kb.id,
    name: kb.name,
    description: kb.description,
    ...chunkingAndModelMessages(s),
    serverEmbedding: server,
    createdAt: kb.createdAt,
    documentCount,
    extraction: toExtractionMessage(s.extraction),
    llmUsage: { ...llmUsage },
    resolution: toResolutionMessage(s.resolution),
    budget,
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

/** A document's indexing progress as GetIndexingProgress answers it. */
export function toDocumentProgressMessage(d: DocumentRecord, chunkCounts: Partial<Record<IndexStatus, number>>, statusDetail: string): v1.DocumentProgress {
  return {
    id: d.id,
    sourceUri: d.sourceUri,
    version: d.version,
    status: STATUS[d.status],
    error: d.error ?? '',
    chunkCounts: chunkCountMessages(chunkCounts),
    statusDetail,
  };
}

export function toDocumentMessage(
  d: DocumentRecord,
  chunkCounts: Partial<Record<IndexStatus, number>>,
  unchanged = false,
  stages: readonly StageRecord[] = [],
  llmUsage: LlmUsage = NO_LLM_USAGE,
  statusDetail = '',
): v1.Document {
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
    chunkCounts: chunkCountMessages(chunkCounts),
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
    llmUsage: { ...llmUsage },
    statusDetail,
  };
}

/** The resolution settings of a request; absent when the request carries none. */
export function fromResolutionMessage(message: v1.ResolutionSettings | undefined | null): ResolutionSettings | undefined {
  return message === undefined || message === null ? undefined : resolutionFromMessage(message);
}

/** One page of AddSite; outcomes are spelled in snake case on the wire. */
export function toSitePageMessage(page: PageResult): v1.SitePage {
  return {
    url: page.url,
    outcome: page.outcome.replace('-', '_'),
    error: page.error,
    document: page.document === null ? undefined : toDocumentMessage(page.document, {}, page.outcome === 'unchanged'),
    done: page.done,
    found: page.found,
  };
}

function chunkCountMessages(chunkCounts: Partial<Record<IndexStatus, number>>): v1.ChunkStatusCount[] {
  return Object.entries(chunkCounts).map(([status, count]) => ({ status: STATUS[status as IndexStatus], count: count ?? 0 }));
}
