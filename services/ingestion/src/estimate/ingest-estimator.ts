import { TrellisError, contentHash } from '@trellis/contracts';
import type { KbScope, TenantScope } from '@trellis/contracts';
import {
  GLEANING_PROMPT,
  assertVectorsCompatible,
  countPromptTokens,
  countTokens,
  embeddingText,
  exceededBy,
  extractionCacheKey,
  extractionMessages,
  extractionModelName,
  extractionPrompt,
  providerModelName,
  readBudgetState,
  splitOptionsFor,
  splitTextWithin,
} from '@trellis/models';
import type { BudgetState, ChatMessage, ExtractionPrompt, TextChunk } from '@trellis/models';
import { estimateCost } from '@trellis/observability';
import type { LlmPriceTable } from '@trellis/observability';
import { kbScope, requireKnowledgeBase } from '@trellis/storage';
import type { KnowledgeBaseRecord, LlmSpend, TrellisRepositories } from '@trellis/storage';
import type { DocumentIngestionService } from '../document-ingestion.service';
import { validateFilename, validateSourceUri } from '../document-request-limits';
import { inputScaleOf, outputRatioOf, summaryRateOf } from './estimate-calibration';
import type { OutputRatio } from './estimate-calibration';

/** Files one estimate takes at most (more are estimated in several calls). */
export const MAX_ESTIMATE_FILES = 10_000;

export interface EstimateInput {
  readonly filename: string;
  readonly mimeType: string;
  readonly sourceUri: string;
  readonly bytes: Uint8Array;
}

export type FileOutcome = 'new' | 'changed' | 'unchanged' | 'unparseable';

export interface FileEstimate {
  readonly filename: string;
  readonly outcome: FileOutcome;
  readonly chunks: number;
  readonly chunkTokens: number;
  readonly error: string;
}

/** Calls and tokens of one kind of model work and their price. */
export interface CostLine {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  estimatedCostUsd: number;
  cacheHits: number;
}

export interface IngestEstimate {
  readonly files: FileEstimate[];
  readonly chunks: number;
  readonly chunkTokens: number;
  readonly extraction: CostLine;
  readonly summaries: CostLine;
  readonly embeddings: CostLine;
  readonly totalTokens: number;
  readonly totalCostUsd: number;
  readonly llmModel: string;
  readonly embeddingModel: string;
  readonly outputBasis: string;
  readonly budget: BudgetState;
  readonly budgetWarning: string;
}

/** What the estimator needs of the server: its models (names only) and its parse and split limits. */
export interface EstimatorModels {
  /** The server's LLM model, or null when extraction is local (costs no LLM call). */
  readonly llmModel: string | null;
  readonly embedding: { readonly model: string; readonly dimensions: number; readonly provider: 'local' | 'openai' | 'hash' };
  /** Output tokens per 100 input tokens of an extraction call, for knowledge bases without their own measure. */
  readonly defaultOutputPercent: number;
  readonly splitTimeoutMs: number;
}

const emptyLine = (): CostLine => ({ calls: 0, inputTokens: 0, outputTokens: 0, estimatedCostUsd: 0, cacheHits: 0 });

/**
 * What ingesting some files into a knowledge base would cost, before anything is stored or
 * sent to a model. Each file goes through ingestion's own parse and chunking's own split with
 * the knowledge base's settings; each chunk whose extraction is not cached (for this tenant,
 * model and prompt) is one extraction call, or two with gleaning, counted as the provider
 * counts a prompt; output, and summaries per extraction call, come from what this knowledge
 * base's past calls returned (`estimate-calibration.ts`). Everything is priced with the price
 * table extraction itself records costs with.
 */
export class IngestEstimator {
  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'documents' | 'extractionCache' | 'llmUsage'>,
    private readonly parser: Pick<DocumentIngestionService, 'parse' | 'assertWithinLimit'>,
    private readonly models: EstimatorModels,
    private readonly prices: LlmPriceTable,
  ) {}

  async estimate(tenant: TenantScope, knowledgeBase: string, files: readonly EstimateInput[]): Promise<IngestEstimate> {
    if (files.length === 0) throw TrellisError.invalid('no files to estimate: give at least one');
    if (files.length > MAX_ESTIMATE_FILES) throw TrellisError.invalid(`at most ${MAX_ESTIMATE_FILES} files per estimate (got ${files.length})`);
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, knowledgeBase);
    assertVectorsCompatible(kb, this.models.embedding);
    const scope = kbScope(kb);
    const llm = this.models.llmModel === null ? null : { model: extractionModelName(kb.settings, this.models.llmModel), prompt: extractionPrompt(kb.settings) };
    const history = await this.repos.llmUsage.getLlmSpend(scope, '0000-00-00');
    const ratio = outputRatioOf(history.extraction, this.models.defaultOutputPercent);
    const scale = inputScaleOf(history.extraction);

    const extraction = emptyLine();
    const embeddings = emptyLine();
    const seenChunks = new Set<string>();
    const seenEmbeddings = new Set<string>();
    const estimates: FileEstimate[] = [];
    for (const file of files) {
      const { estimate, chunks } = await this.fileChunks(scope, kb, file);
      estimates.push(estimate);
      for (const chunk of chunks) {
        const text = embeddingText(chunk);
        if (seenEmbeddings.has(text)) embeddings.cacheHits++;
        else {
          seenEmbeddings.add(text);
          embeddings.inputTokens += countTokens(text);
        }
        if (llm !== null) await this.addExtraction(scope, llm, chunk, { ...ratio, inputScale: scale }, seenChunks, extraction);
      }
    }
    // One embedding request per batch of 64 texts, as chunking sends them.
    embeddings.calls = Math.ceil((seenEmbeddings.size) / 64);
    embeddings.estimatedCostUsd = estimateCost(this.prices, providerModelName(this.models.embedding.model), embeddings.inputTokens, 0);
    const summaries = llm === null ? emptyLine() : this.summaries(history, extraction.calls, llm.model);
    if (llm !== null) extraction.estimatedCostUsd = estimateCost(this.prices, llm.model, extraction.inputTokens, extraction.outputTokens);

    const llmTokens = extraction.inputTokens + extraction.outputTokens + summaries.inputTokens + summaries.outputTokens;
    const llmCost = extraction.estimatedCostUsd + summaries.estimatedCostUsd;
    const budget = await readBudgetState(this.repos.llmUsage, scope, kb.settings.llmBudget);
    const counted = estimates.filter((f) => f.outcome === 'new' || f.outcome === 'changed');
    return {
      files: estimates,
      chunks: counted.reduce((n, f) => n + f.chunks, 0),
      chunkTokens: counted.reduce((n, f) => n + f.chunkTokens, 0),
      extraction,
      summaries,
      embeddings,
      totalTokens: llmTokens + embeddings.inputTokens,
      totalCostUsd: llmCost + embeddings.estimatedCostUsd,
      llmModel: llm?.model ?? '',
      embeddingModel: this.models.embedding.model,
      outputBasis: llm === null ? 'local extraction: no LLM calls' : scale === 1 ? ratio.basis : `${ratio.basis}; prompts counted ×${scale.toFixed(3)} as the provider counted them`,
      budget,
      budgetWarning: llm === null ? '' : exceededBy(budget, llmTokens, llmCost),
    };
  }

  /** The chunks ingesting one file would make: none when it is unparseable or already indexed. */
  private async fileChunks(scope: KbScope, kb: KnowledgeBaseRecord, file: EstimateInput): Promise<{ estimate: FileEstimate; chunks: TextChunk[] }> {
    const filename = validateFilename(file.filename);
    validateSourceUri(file.sourceUri);
    this.parser.assertWithinLimit(file.bytes.byteLength, filename);
    const held = await this.repos.documents.findDocumentBySource(scope, file.sourceUri.trim() || filename);
    const base = { filename, chunks: 0, chunkTokens: 0, error: '' };
    if (held !== null && held.contentHash === contentHash(file.bytes) && held.status !== 'failed') return { estimate: { ...base, outcome: 'unchanged' }, chunks: [] };
    let parsed;
    try {
      parsed = await this.parser.parse(file.bytes, filename, file.mimeType);
    } catch (error) {
      return { estimate: { ...base, outcome: 'unparseable', error: (error as Error).message }, chunks: [] };
    }
    const chunks = await splitTextWithin(parsed.text, splitOptionsFor(kb.settings, parsed.mimeType), this.models.splitTimeoutMs);
    const chunkTokens = chunks.reduce((n, c) => n + c.tokenCount, 0);
    return { estimate: { ...base, outcome: held === null ? 'new' : 'changed', chunks: chunks.length, chunkTokens }, chunks };
  }

  /** One chunk's extraction calls, unless the cache (or an equal chunk earlier in these files) answers it. */
  private async addExtraction(
    scope: KbScope,
    llm: { model: string; prompt: ExtractionPrompt },
    chunk: TextChunk,
    ratio: OutputRatio & { inputScale: number },
    seen: Set<string>,
    line: CostLine,
  ): Promise<void> {
    const key = extractionCacheKey(contentHash(chunk.text), llm.model, llm.prompt.version);
    if (seen.has(key) || (await this.repos.extractionCache.getCachedExtraction(scope, key)) !== null) {
      line.cacheHits++;
      return;
    }
    seen.add(key);
    const messages: ChatMessage[] = extractionMessages(llm.prompt, chunk.text, chunk.heading);
    const firstIn = Math.round(countPromptTokens(messages) * ratio.inputScale);
    const firstOut = Math.round(firstIn * ratio.outputPerInput);
    line.calls++;
    line.inputTokens += firstIn;
    line.outputTokens += firstOut;
    if (llm.prompt.gleaningPasses > 0) {
      // The gleaning turn sends the first turn again with the model's answer and the follow-up.
      const gleaningIn = firstIn + firstOut + Math.round(countPromptTokens([{ content: GLEANING_PROMPT }]) * ratio.inputScale);
      line.calls++;
      line.inputTokens += gleaningIn;
      line.outputTokens += Math.round(gleaningIn * ratio.outputPerInput);
    }
  }

  private summaries(history: { summary: LlmSpend; extraction: LlmSpend }, extractionCalls: number, model: string): CostLine {
    const rate = summaryRateOf(history.extraction, history.summary);
    const line = emptyLine();
    line.calls = Math.round(extractionCalls * rate.callsPerExtraction);
    line.inputTokens = Math.round(extractionCalls * rate.inputPerExtraction);
    line.outputTokens = Math.round(extractionCalls * rate.outputPerExtraction);
    line.estimatedCostUsd = estimateCost(this.prices, model, line.inputTokens, line.outputTokens);
    return line;
  }
}
