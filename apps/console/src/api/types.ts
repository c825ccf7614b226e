/**
 * The REST API's JSON (proto3 JSON of trellis.v1, every field written): 64-bit integers arrive
 * as strings, enums as their names. Only the fields the console reads are declared.
 */

export type IndexStatus =
  | 'INDEX_STATUS_UNSPECIFIED'
  | 'INDEX_STATUS_PENDING'
  | 'INDEX_STATUS_CHUNKED'
  | 'INDEX_STATUS_EMBEDDED'
  | 'INDEX_STATUS_EXTRACTED'
  | 'INDEX_STATUS_GRAPHED'
  | 'INDEX_STATUS_FAILED';

/** A uint64 field: a decimal string in proto3 JSON. */
export type Int64 = string;

export interface ChunkingSettings {
  chunkSizeTokens: number;
  chunkOverlapTokens: number;
  splitter: string;
}

export interface ModelSettings {
  embeddingModel: string;
  embeddingDimensions: number;
  llmModel: string;
  extractionPromptVersion: string;
}

export interface ExtractionSettings {
  entityTypes: string[];
  instructions: string;
  examples: string;
  gleaningPasses: number;
  outputMode: string;
}

export interface ResolutionSettings {
  mode: string;
  similarityThreshold: number;
  llmMergeDecisions: string;
  llmMergeFloor: number;
  summaryMaxChars: number;
}

export interface LlmUsage {
  calls: Int64;
  inputTokens: Int64;
  outputTokens: Int64;
  estimatedCostUsd: number;
  cacheHits: Int64;
}

export interface KnowledgeBase {
  id: string;
  name: string;
  description: string;
  chunking: ChunkingSettings;
  models: ModelSettings;
  createdAt: string;
  documentCount: number;
  extraction: ExtractionSettings;
  resolution: ResolutionSettings;
  llmUsage: LlmUsage;
  serverEmbedding: { model: string; dimensions: number; fallback: string };
}

export interface DocumentStage {
  name: string;
  startedAt: string;
  finishedAt: string;
  durationMs: Int64;
  events: number;
  failures: number;
  lastError: string;
}

export interface TrellisDocument {
  id: string;
  knowledgeBaseId: string;
  sourceUri: string;
  filename: string;
  mimeType: string;
  version: number;
  status: IndexStatus;
  error: string;
  sizeBytes: Int64;
  chunkCounts: Array<{ status: IndexStatus; count: number }>;
  createdAt: string;
  updatedAt: string;
  currentStage: string;
  stages: DocumentStage[];
  llmUsage: LlmUsage;
}

export interface Entity {
  id: string;
  name: string;
  type: string;
  description: string;
  mentionCount: number;
  needsReview: boolean;
}

export interface Relationship {
  id: string;
  sourceEntityId: string;
  targetEntityId: string;
  sourceName: string;
  targetName: string;
  label: string;
  description: string;
  weight: number;
  chunkIds: string[];
}

export interface EntityDetail {
  entity: Entity;
  relationships: Relationship[];
  neighbours: Entity[];
}

export interface GraphEdit {
  id: string;
  actor: string;
  action: string;
  targetIds: string[];
  before: string;
  after: string;
  createdAt: string;
  undoneAt: string;
  undoneBy: string;
}

export interface ChunkSignal {
  source: string;
  score: number;
  rank: number;
}

export interface ChunkHit {
  chunkId: string;
  documentId: string;
  sourceUri: string;
  ordinal: number;
  text: string;
  score: number;
  signals: ChunkSignal[];
  knowledgeBaseId: string;
}

export interface Citation {
  index: number;
  documentId: string;
  chunkId: string;
  sourceUri: string;
  snippet: string;
  communityId: string;
  sourceChunkIds: string[];
}

export interface Answer {
  chatId: string;
  /** The follow-up as retrieval read it, rewritten with the conversation ('' when unchanged). */
  condensedQuestion?: string;
  text: string;
  citations: Citation[];
  refinedQuestion: string;
  route: string;
  routeReason: string;
}

/** A saved conversation (ListChats). */
export interface ChatSummary {
  id: string;
  knowledgeBaseId: string;
  title: string;
  messageCount: number;
  updatedAt: string;
}

/** One message of a saved conversation (GetChat). */
export interface SavedChatMessage {
  role: 'user' | 'assistant';
  content: string;
  citations: Citation[];
  condensedQuestion: string;
}

export interface StageEvent {
  name: string;
  detail: string;
}

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** Statuses a document leaves no more on its own. */
export function isSettled(status: IndexStatus): boolean {
  return status === 'INDEX_STATUS_GRAPHED' || status === 'INDEX_STATUS_FAILED';
}

/** `INDEX_STATUS_GRAPHED` → `graphed`. */
export function statusLabel(status: IndexStatus): string {
  return status.replace('INDEX_STATUS_', '').toLowerCase();
}
