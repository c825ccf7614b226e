import type { IndexStatus, KbSettings } from '@trellis/contracts';

/** What language-model work for indexing cost: per document version, or summed per knowledge base. */
export interface LlmUsage {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** US dollars, from the price table (TRELLIS_LLM_PRICES); 0 for models without a price. */
  estimatedCostUsd: number;
  /** Chunks whose extraction came from the cache, costing no call. */
  cacheHits: number;
}

/** What a language-model call was for: extracting a chunk, summarising the graph, or writing community reports. */
export type LlmPurpose = 'extraction' | 'summary' | 'community';

export const LLM_PURPOSES: readonly LlmPurpose[] = ['extraction', 'summary', 'community'];

/** LLM work of a knowledge base over a span of days, for one purpose. */
export interface LlmSpend {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** US dollars, as `LlmUsage.estimatedCostUsd`. */
  estimatedCostUsd: number;
  /**
   * The same calls' input as Trellis counts prompts (cl100k, `countPromptTokens`), where the
   * caller counted it: how the provider's own count relates to Trellis's, for ingest estimates.
   */
  countedInputTokens: number;
}

/** A chunk whose LLM extraction waits for its knowledge base's budget. */
export interface PausedChunk {
  chunkId: string;
  documentId: string;
  version: number;
  contentHash: string;
  pausedAt: string;
}

export interface KnowledgeBaseRecord {
  id: string;
  tenantId: string;
  name: string;
  description: string;
  settings: KbSettings;
  createdAt: string;
}

export interface DocumentRecord {
  id: string;
  tenantId: string;
  kbId: string;
  sourceUri: string;
  filename: string;
  mimeType: string;
  contentHash: string;
  version: number;
  status: IndexStatus;
  error: string | null;
  sizeBytes: number;
  metadata: Record<string, string>;
  /** What the current version is about; '' for documents indexed before titles were recorded. */
  title: string;
  createdAt: string;
  updatedAt: string;
}

/** A new version of a document, with the text parsed from it. */
export interface NewDocumentVersion {
  id: string;
  sourceUri: string;
  filename: string;
  mimeType: string;
  contentHash: string;
  version: number;
  sizeBytes: number;
  metadata: Record<string, string>;
  /** See DocumentRecord.title; derived at ingestion (services/ingestion parsing/document-title.ts); '' when absent. */
  title?: string;
  text: string;
}

export interface ChunkRecord {
  id: string;
  kbId: string;
  documentId: string;
  version: number;
  ordinal: number;
  text: string;
  /** Markdown heading path the chunk sits under, '' when none. */
  heading: string;
  tokenCount: number;
  contentHash: string;
  status: IndexStatus;
  error: string | null;
}

export interface NewChunk extends Pick<ChunkRecord, 'id' | 'documentId' | 'version' | 'ordinal' | 'text' | 'heading' | 'tokenCount' | 'contentHash'> {
  embedding: Float32Array;
}

export interface ScoredChunk {
  chunk: ChunkRecord;
  /** Higher is better: cosine similarity for vectors, negated BM25 for full text. */
  score: number;
}

export interface ChunkFilter {
  /** Only chunks of these documents, when not empty. */
  documentIds?: readonly string[];
}

/** What one extraction found in one chunk, before resolution against the graph. */
export interface ExtractedEntity {
  name: string;
  type: string;
  description: string;
  /** Short facts about the entity as key/value pairs ("born": "1815"). */
  attributes?: Record<string, string>;
  /** Set when the model named the entity only as a relationship end: its type is a guess. */
  needsReview?: boolean;
}

export interface ExtractedRelationship {
  source: string;
  target: string;
  /** Short relation phrase ("founded", "is located in"). */
  label: string;
  description: string;
  /** 1..10. */
  strength: number;
}

export interface ExtractionResult {
  entities: ExtractedEntity[];
  relationships: ExtractedRelationship[];
}

export interface EntityRecord {
  id: string;
  kbId: string;
  name: string;
  normalizedName: string;
  type: string;
  /** Derived from the mentions that remain. */
  description: string;
  mentionCount: number;
  /** True while every mention of the entity only names it (none describes it). */
  needsReview: boolean;
}

/** An entity as a walk over the graph sees it: its names and how many mentions it has. */
export type EntityNode = Pick<EntityRecord, 'id' | 'name' | 'normalizedName' | 'mentionCount'>;

/** A same-name entity a new mention may resolve to, with the embedding of its summary. */
export interface EntityCandidate {
  entity: EntityRecord;
  embedding: Float32Array;
}

export interface RelationshipRecord {
  id: string;
  kbId: string;
  sourceId: string;
  targetId: string;
  sourceName: string;
  targetName: string;
  label: string;
  description: string;
  weight: number;
  mentionCount: number;
}

/** A relationship as a walk over the graph needs it: its ends and weight, read from an index alone. */
export type RelationshipEdge = Pick<RelationshipRecord, 'id' | 'sourceId' | 'targetId' | 'weight'>;

export interface ScoredRelationship {
  relationship: RelationshipRecord;
  score: number;
}

export interface ScoredEntity {
  entity: EntityRecord;
  score: number;
}

export interface ChatTurn {
  chatId: string;
  question: string;
  answer: string;
  citations: unknown[];
  /** The question as condensed with the history, when that changed it. */
  condensedQuestion?: string;
  /** The chat engine the conversation started with ('' for none). */
  engine?: string;
}

/** A saved conversation. */
export interface ChatRecord {
  id: string;
  kbId: string;
  /** Its first question, shortened. */
  title: string;
  engine: string;
  messageCount: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * A chat engine's settings as stored: what a request that selects the engine gets where it
 * leaves a field empty. Empty strings and zeros mean the server default. Validated by chat.
 */
export interface ChatEngineSettings {
  knowledgeBases: string[];
  mode: string;
  topK: number;
  depth: number;
  strategy: string;
  scope: string;
  systemPrompt: string;
  refinePrompt: string;
  condensePrompt: string;
  answerPrompt: string;
  showGraphContext: boolean;
  /** Absent in engines stored before it existed: false. */
  noRerank?: boolean;
}

/** A named chat configuration of a tenant. */
export interface ChatEngineRecord {
  name: string;
  description: string;
  settings: ChatEngineSettings;
  createdAt: string;
  updatedAt: string;
}

/** One message of a saved conversation. */
export interface ChatMessageRecord {
  role: 'user' | 'assistant';
  content: string;
  /** An assistant message's citations, as saved. */
  citations: unknown[];
  /** A user message's condensed question ('' when the question was used as asked). */
  condensedQuestion: string;
  createdAt: string;
}

/** The steps a document version goes through, in order. */
export type PipelineStage = 'ingestion' | 'chunking' | 'extraction' | 'graph';

export const PIPELINE_STAGES: readonly PipelineStage[] = ['ingestion', 'chunking', 'extraction', 'graph'];

/** One piece of work of a stage (an upload, or one event handled), to record. */
export interface StageEvent {
  documentId: string;
  version: number;
  stage: PipelineStage;
  startedAt: string;
  finishedAt: string;
  /** Set when the work failed. */
  error?: string | null;
}

/** A stage of one document version, aggregated over its work: first start to last finish. */
export interface StageRecord {
  stage: PipelineStage;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  events: number;
  failures: number;
  lastError: string | null;
}
