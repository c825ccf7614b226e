import { TrellisError, validateIdList, withinLength } from '@trellis/contracts';
import type { ExtractionSettings, IndexStatus, KbScope, KbSettings, LlmBudgetSettings, ResolutionSettings, TenantScope } from '@trellis/contracts';
import { hasLlmBudget, readBudgetState } from '@trellis/models';
import type { BudgetState, EmbedderInfo } from '@trellis/models';
import type { SummaryRefresher } from '@trellis/graph';
import { kbScope, requireKnowledgeBase } from '@trellis/storage';
import type { DocumentRecord, KnowledgeBaseRecord, LlmUsage, StageRecord, TrellisRepositories } from '@trellis/storage';

export const DEFAULT_CHUNK_SIZE_TOKENS = 512;
export const DEFAULT_CHUNK_OVERLAP_TOKENS = 64;

export interface KnowledgeBaseInput {
  name: string;
  description: string;
  settings: Partial<Omit<KbSettings, 'extraction'>> & { extraction?: Partial<ExtractionSettings> };
}

export interface DocumentWithCounts {
  document: DocumentRecord;
  chunkCounts: Partial<Record<IndexStatus, number>>;
  stages: StageRecord[];
  llmUsage: LlmUsage;
  /** What holds the document up ("paused: budget (...)"), or ''. */
  statusDetail: string;
}

/** A document and its chunk counts, as GetIndexingProgress reports it. */
export type DocumentIndexing = Pick<DocumentWithCounts, 'document' | 'chunkCounts' | 'statusDetail'>;

/** The prefix of the status detail of a document whose chunks wait for the LLM budget. */
export const PAUSED_BY_BUDGET = 'paused: budget';

/** Which page of ListDocuments: a size (0: the default), the token of the page before, a status. */
export interface DocumentPageQuery {
  pageSize: number;
  pageToken: string;
  status?: IndexStatus;
}

export const DEFAULT_DOCUMENT_PAGE_SIZE = 100;
export const MAX_DOCUMENT_PAGE_SIZE = 1000;

/** What UpdateKnowledgeBase may change; absent fields keep their value. */
export interface KnowledgeBaseChanges {
  description?: string;
  llmModel?: string;
  extraction?: Partial<ExtractionSettings>;
  resolution?: ResolutionSettings;
  /** Replaces the budget; all zeros removes it. */
  llmBudget?: LlmBudgetSettings;
}

const MAX_ENTITY_TYPES = 50;
/** A knowledge base's description: longer is refused, not cut. */
const MAX_DESCRIPTION_CHARS = 2000;
const MAX_PROMPT_TEXT = 20_000;
/** Model names and prompt versions: provider model ids are well under this. */
const MAX_MODEL_NAME_CHARS = 256;

/** Creating, finding and deleting knowledge bases and reading their documents' status. */
export class KnowledgeBaseService {
  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'documents' | 'llmUsage' | 'communities' | 'budgetPauses'>,
    /** Re-summarises and re-embeds what a document delete changed. */
    private readonly summaries: SummaryRefresher,
    /** Server default of the summary length limit (TRELLIS_SUMMARY_MAX_CHARS). */
    private readonly defaultSummaryMaxChars: number,
    /** The model this server embeds with: recorded in every new knowledge base. */
    private readonly embedding: EmbedderInfo,
  ) {}

  /** The embeddings this server uses, with the reason when they are a fall-back. */
  serverEmbedding(): EmbedderInfo {
    return this.embedding;
  }

  async create(scope: TenantScope, input: KnowledgeBaseInput): Promise<KnowledgeBaseRecord> {
    const requested = input.settings.embeddingModel?.trim() ?? '';
    if (requested !== '' && requested !== this.embedding.model) {
      throw TrellisError.invalid(`this server embeds with ${this.embedding.model}; embedding model "${requested}" is not available (set TRELLIS_EMBEDDING_MODEL on the server)`);
    }
    return this.repos.knowledgeBases.createKnowledgeBase(scope, {
      name: validateName(input.name),
      description: withinLength(input.description, 'description', MAX_DESCRIPTION_CHARS),
      settings: { ...validateSettings(input.settings), embeddingModel: this.embedding.model, embeddingDimensions: this.embedding.dimensions },
    });
  }

  async update(scope: TenantScope, idOrName: string, changes: KnowledgeBaseChanges): Promise<KnowledgeBaseRecord> {
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, scope, idOrName);
    const settings: KbSettings = {
      ...kb.settings,
      llmModel: changes.llmModel !== undefined ? withinLength(changes.llmModel.trim(), 'llm_model', MAX_MODEL_NAME_CHARS) : kb.settings.llmModel,
      extraction: changes.extraction !== undefined ? validateExtraction(changes.extraction) : kb.settings.extraction,
      resolution: changes.resolution !== undefined ? validateResolution(changes.resolution) : kb.settings.resolution,
      llmBudget: changes.llmBudget !== undefined ? validateBudget(changes.llmBudget) : kb.settings.llmBudget,
    };
    if (!hasLlmBudget(settings.llmBudget)) delete settings.llmBudget;
    const description = changes.description !== undefined ? withinLength(changes.description, 'description', MAX_DESCRIPTION_CHARS) : kb.description;
    const updated = await this.repos.knowledgeBases.updateKnowledgeBase(kbScope(kb), { description, settings });
    if (updated === null) throw TrellisError.notFound(`knowledge base "${idOrName}" not found`);
    return updated;
  }

  llmUsage(kb: KnowledgeBaseRecord): Promise<LlmUsage> {
    return this.repos.llmUsage.getKnowledgeBaseLlmUsage(kbScope(kb));
  }

  /** The knowledge base's LLM budget against today's and this month's spend, and the chunks it holds up. */
  async budget(kb: KnowledgeBaseRecord, now = new Date()): Promise<{ state: BudgetState; pausedChunks: number }> {
    const [state, pausedChunks] = await Promise.all([readBudgetState(this.repos.llmUsage, kbScope(kb), kb.settings.llmBudget, now), this.repos.budgetPauses.countPausedChunks(kbScope(kb))]);
    return { state, pausedChunks };
  }

  list(scope: TenantScope): Promise<KnowledgeBaseRecord[]> {
    return this.repos.knowledgeBases.listKnowledgeBases(scope);
  }

  get(scope: TenantScope, idOrName: string): Promise<KnowledgeBaseRecord> {
    return requireKnowledgeBase(this.repos.knowledgeBases, scope, idOrName);
  }

  async documentCount(kb: KnowledgeBaseRecord): Promise<number> {
    return this.repos.documents.countDocuments(kbScope(kb));
  }

  async delete(scope: TenantScope, idOrName: string): Promise<void> {
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, scope, idOrName);
    await this.repos.knowledgeBases.deleteKnowledgeBase(kbScope(kb));
  }

  /**
   * One page of documents with their progress. The page token is the last id of the page
   * (keyset paging: a document added or deleted meanwhile shifts no other onto another page).
   */
  async listDocuments(scope: TenantScope, kbIdOrName: string, query: DocumentPageQuery): Promise<{ documents: DocumentWithCounts[]; nextPageToken: string }> {
    if (query.pageSize > MAX_DOCUMENT_PAGE_SIZE) throw TrellisError.invalid(`page_size must be at most ${MAX_DOCUMENT_PAGE_SIZE} (got ${query.pageSize})`);
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, scope, kbIdOrName);
    const limit = query.pageSize || DEFAULT_DOCUMENT_PAGE_SIZE;
    // One more than the page: whether a next page exists, without an empty last page.
    const found = await this.repos.documents.listDocuments(kbScope(kb), { limit: limit + 1, afterId: afterIdOf(query.pageToken), status: query.status });
    const page = found.slice(0, limit);
    const documents = await this.withProgress(kbScope(kb), page);
    return { documents, nextPageToken: found.length > limit ? Buffer.from(page.at(-1)!.id, 'utf8').toString('base64url') : '' };
  }

  async getDocument(scope: TenantScope, kbIdOrName: string, documentId: string): Promise<DocumentWithCounts> {
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, scope, kbIdOrName);
    const document = await this.repos.documents.getDocument(kbScope(kb), documentId);
    if (document === null) throw TrellisError.notFound(`document "${documentId}" not found in knowledge base "${kb.name}"`);
    return (await this.withProgress(kbScope(kb), [document]))[0]!;
  }

  /**
   * How far indexing of these documents (1 to 1,000 ids) has come, without their stages or
   * usage: what a client polls while they index. In the order asked; ids the knowledge base
   * does not hold are left out.
   */
  async indexingProgress(scope: TenantScope, kbIdOrName: string, documentIds: readonly string[]): Promise<DocumentIndexing[]> {
    const ids = validateIdList(documentIds, 'document_ids');
    if (ids.length === 0) throw TrellisError.invalid('document_ids is empty: name the documents to report on');
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, scope, kbIdOrName);
    const progress = await this.repos.documents.listIndexingProgress(kbScope(kb), ids);
    const details = await this.statusDetails(kbScope(kb), progress.map((p) => p.pausedChunks));
    return progress.map(({ document, chunkCounts }, i) => ({ document, chunkCounts, statusDetail: details[i]! }));
  }

  /** The documents with their indexing progress, read for all of them at once. */
  private async withProgress(scope: KbScope, documents: readonly DocumentRecord[]): Promise<DocumentWithCounts[]> {
    const progress = await this.repos.documents.listProgress(scope, documents.map((d) => ({ documentId: d.id, version: d.version })));
    const details = await this.statusDetails(scope, documents.map((d) => progress.get(d.id)!.pausedChunks));
    return documents.map((document, i) => {
      const { pausedChunks: _, ...rest } = progress.get(document.id)!;
      return { document, ...rest, statusDetail: details[i]! };
    });
  }

  /** The status detail for each count of paused chunks; the budget is read once, and only when a chunk waits for it. */
  private async statusDetails(scope: KbScope, pausedChunks: readonly number[]): Promise<string[]> {
    if (!pausedChunks.some((n) => n > 0)) return pausedChunks.map(() => '');
    const kb = await this.repos.knowledgeBases.findKnowledgeBase(scope, scope.kbId);
    const budget = kb === null ? null : await readBudgetState(this.repos.llmUsage, scope, kb.settings.llmBudget);
    return pausedChunks.map((n) => (n > 0 ? pausedDetail(n, budget) : ''));
  }

  async deleteDocument(scope: TenantScope, kbIdOrName: string, documentId: string): Promise<void> {
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, scope, kbIdOrName);
    const deleted = await this.repos.documents.deleteDocument(kbScope(kb), documentId);
    // The delete already left only the remaining text in every description; this brings the
    // summaries and embeddings of what it touched up to date. Were it interrupted, the rows
    // stay pending until the next graph write of the knowledge base, a retried delete, or a
    // graph-store start finishes the job.
    await this.summaries.refresh(kbScope(kb), kb.settings.resolution?.summaryMaxChars || this.defaultSummaryMaxChars);
    // The graph lost what only this document said: graph-store's refresh of communities follows.
    if (deleted) await this.repos.communities.markCommunitiesChanged(kbScope(kb), new Date().toISOString());
    if (!deleted) throw TrellisError.notFound(`document "${documentId}" not found in knowledge base "${kb.name}"`);
  }
}

/**
 * "paused: budget (3 chunks wait: daily token budget of 1000 reached; resumes at ...)". A
 * budget no longer exhausted means the chunks are about to be resumed.
 */
function pausedDetail(chunks: number, budget: BudgetState | null): string {
  const wait = `${chunks} chunk${chunks === 1 ? '' : 's'} wait`;
  if (budget === null || budget.exhausted === '') return `${PAUSED_BY_BUDGET} (${wait}; resuming)`;
  return `${PAUSED_BY_BUDGET} (${wait}: ${budget.exhausted}; resumes when the budget is raised or at ${budget.resetsAt})`;
}

/** The id a page token stands for; a token this server did not give is INVALID_ARGUMENT. */
function afterIdOf(pageToken: string): string | undefined {
  if (pageToken === '') return undefined;
  const id = /^[A-Za-z0-9_-]{1,700}$/.test(pageToken) ? Buffer.from(pageToken, 'base64url').toString('utf8') : '';
  if (id === '' || id.length > 512 || Buffer.from(id, 'utf8').toString('base64url') !== pageToken) {
    throw TrellisError.invalid('page_token is not one a ListDocuments response gave');
  }
  return id;
}

function validateName(name: string): string {
  const trimmed = name.trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(trimmed)) {
    throw TrellisError.invalid(`knowledge base name "${name}" is invalid: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`);
  }
  return trimmed;
}

function validateSettings(input: KnowledgeBaseInput['settings']): KbSettings {
  const chunkSizeTokens = input.chunkSizeTokens || DEFAULT_CHUNK_SIZE_TOKENS;
  const chunkOverlapTokens = input.chunkOverlapTokens || DEFAULT_CHUNK_OVERLAP_TOKENS;
  const problems: string[] = [];
  if (chunkSizeTokens < 32 || chunkSizeTokens > 8192) problems.push('chunk_size_tokens must be between 32 and 8192');
  if (chunkOverlapTokens >= chunkSizeTokens / 2) problems.push('chunk_overlap_tokens must be less than half of chunk_size_tokens');
  const splitter = input.splitter ?? '';
  if (!['', 'sentence', 'markdown'].includes(splitter)) problems.push('splitter must be "sentence" or "markdown"');
  if (problems.length > 0) throw TrellisError.invalid(problems.join('; '));
  return {
    chunkSizeTokens,
    chunkOverlapTokens,
    splitter,
    embeddingModel: input.embeddingModel ?? '',
    embeddingDimensions: input.embeddingDimensions ?? 0,
    llmModel: withinLength(input.llmModel ?? '', 'models.llm_model', MAX_MODEL_NAME_CHARS),
    extractionPromptVersion: withinLength(input.extractionPromptVersion ?? '', 'models.extraction_prompt_version', MAX_MODEL_NAME_CHARS),
    ...(input.extraction !== undefined ? { extraction: validateExtraction(input.extraction) } : {}),
    resolution: validateResolution(input.resolution),
    ...(input.llmBudget !== undefined && hasLlmBudget(validateBudget(input.llmBudget)) ? { llmBudget: validateBudget(input.llmBudget) } : {}),
  };
}

/** Checks an LLM budget: every limit a finite number, 0 (none) or more; tokens whole. */
export function validateBudget(input: LlmBudgetSettings): LlmBudgetSettings {
  const problems: string[] = [];
  for (const [name, value] of Object.entries({ daily_tokens: input.dailyTokens, monthly_tokens: input.monthlyTokens, daily_usd: input.dailyUsd, monthly_usd: input.monthlyUsd })) {
    if (!Number.isFinite(value) || value < 0) problems.push(`llm_budget.${name} must be 0 (no limit) or more (got ${value})`);
    else if (name.endsWith('tokens') && !Number.isInteger(value)) problems.push(`llm_budget.${name} must be a whole number of tokens (got ${value})`);
  }
  if (problems.length > 0) throw TrellisError.invalid(problems.join('; '));
  return { dailyTokens: input.dailyTokens, monthlyTokens: input.monthlyTokens, dailyUsd: input.dailyUsd, monthlyUsd: input.monthlyUsd };
}

/** Checks per-KB extraction settings; empty values keep the defaults. */
export function validateExtraction(input: Partial<ExtractionSettings>): ExtractionSettings {
  const problems: string[] = [];
  const entityTypes = [...new Set((input.entityTypes ?? []).map((t) => t.trim().toLowerCase()).filter((t) => t !== ''))];
  if (entityTypes.length > MAX_ENTITY_TYPES) problems.push(`at most ${MAX_ENTITY_TYPES} entity types`);
  if (entityTypes.some((t) => t.length > 60)) problems.push('entity types must be at most 60 characters');
  const instructions = (input.instructions ?? '').trim();
  const examples = (input.examples ?? '').trim();
  if (instructions.length > MAX_PROMPT_TEXT) problems.push(`extraction instructions must be at most ${MAX_PROMPT_TEXT} characters`);
  if (examples.length > MAX_PROMPT_TEXT) problems.push(`extraction examples must be at most ${MAX_PROMPT_TEXT} characters`);
  const gleaningPasses = input.gleaningPasses ?? 0;
  if (gleaningPasses !== 0 && gleaningPasses !== 1) problems.push('gleaning_passes must be 0 or 1');
  const outputMode = input.outputMode || 'auto';
  if (!['auto', 'json_schema', 'json_object'].includes(outputMode)) problems.push('output_mode must be auto, json_schema or json_object');
  if (problems.length > 0) throw TrellisError.invalid(problems.join('; '));
  return { entityTypes, instructions, examples, gleaningPasses, outputMode };
}

function validateResolution(input: ResolutionSettings | undefined): ResolutionSettings {
  const settings: ResolutionSettings = {
    mode: input?.mode ?? '',
    similarityThreshold: input?.similarityThreshold ?? 0,
    llmMergeDecisions: input?.llmMergeDecisions ?? '',
    llmMergeFloor: input?.llmMergeFloor ?? 0,
    summaryMaxChars: input?.summaryMaxChars ?? 0,
  };
  const problems: string[] = [];
  if (!['', 'name', 'embedding'].includes(settings.mode)) problems.push('resolution.mode must be "name" or "embedding"');
  if (!['', 'on', 'off'].includes(settings.llmMergeDecisions)) problems.push('resolution.llm_merge_decisions must be "on" or "off"');
  for (const [name, value] of [['similarity_threshold', settings.similarityThreshold], ['llm_merge_floor', settings.llmMergeFloor]] as const) {
    if (!(value >= 0 && value <= 1)) problems.push(`resolution.${name} must be between 0 and 1`);
  }
  if (settings.llmMergeFloor > 0 && settings.similarityThreshold > 0 && settings.llmMergeFloor > settings.similarityThreshold) {
    problems.push('resolution.llm_merge_floor must not exceed resolution.similarity_threshold');
  }
  if (settings.summaryMaxChars !== 0 && (settings.summaryMaxChars < 200 || settings.summaryMaxChars > 100_000)) {
    problems.push('resolution.summary_max_chars must be between 200 and 100000');
  }
  if (problems.length > 0) throw TrellisError.invalid(problems.join('; '));
  return settings;
}
