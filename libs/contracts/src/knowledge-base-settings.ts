import type * as events from './generated/trellis/events/v1/indexing';
import type * as v1 from './generated/index.trellis.v1';

/**
 * A knowledge base's settings, as stored with it, set through the KnowledgeBase API and carried
 * by every indexing event (so that no stage reads them again per chunk), with their mapping to
 * and from those messages.
 */

/** Per-knowledge-base settings. Zero or empty values mean "server default". */
export interface KbSettings {
  chunkSizeTokens: number;
  chunkOverlapTokens: number;
  /** '' (auto), 'sentence' or 'markdown'. */
  splitter: string;
  embeddingModel: string;
  embeddingDimensions: number;
  llmModel: string;
  extractionPromptVersion: string;
  /** How the LLM extractor is prompted for this knowledge base; absent means the defaults. */
  extraction?: ExtractionSettings;
  /** How chunk entities are matched to graph entities; absent or zero fields: server defaults. */
  resolution?: ResolutionSettings;
  /** Most LLM work per UTC day and month; absent or zero fields: no limit. */
  llmBudget?: LlmBudgetSettings;
}

/** Limits on a knowledge base's LLM spend (input and output tokens together, or US dollars); 0: none. */
export interface LlmBudgetSettings {
  dailyTokens: number;
  monthlyTokens: number;
  dailyUsd: number;
  monthlyUsd: number;
}

/** The UTC day of `at` (YYYY-MM-DD): LLM spend is kept, and budgets are counted, per day. */
export function spendDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** How a knowledge base's LLM extraction is prompted and called. Empty values mean "default". */
export interface ExtractionSettings {
  /** Entity types the model should use, e.g. ["person", "drug"]; empty: the model chooses. */
  entityTypes: string[];
  /** Extra instructions appended to the domain-neutral system prompt. */
  instructions: string;
  /** Worked examples (text and the expected JSON) shown to the model. */
  examples: string;
  /** 0 or 1: a second "gleaning" turn asking for what the first answer missed. */
  gleaningPasses: number;
  /** auto (json_schema, falling back to json_object when the provider rejects it), json_schema or json_object. */
  outputMode: ExtractionOutputMode;
}

export type ExtractionOutputMode = 'auto' | 'json_schema' | 'json_object';

/** Per-knowledge-base entity resolution. Zero or empty values mean "server default". */
export interface ResolutionSettings {
  /** '' (server default), 'name' (same normalised name → same entity) or 'embedding'. */
  mode: '' | 'name' | 'embedding';
  /** Cosine similarity of a mention to a same-name entity at or above which they are one. */
  similarityThreshold: number;
  /** '' (server default), 'on' or 'off': ask the LLM about same-name entities that are close but below the threshold. */
  llmMergeDecisions: '' | 'on' | 'off';
  /** Lower end of the "close" band in which the LLM is asked. */
  llmMergeFloor: number;
  /** Longest summary description before it is summarised by the LLM (or truncated without one). */
  summaryMaxChars: number;
}

/** What indexing events carry of a knowledge base: its name and settings. */
export interface KnowledgeBaseSnapshot {
  name: string;
  settings: KbSettings;
}


export function toExtractionMessage(settings: ExtractionSettings | undefined): v1.ExtractionSettings {
  return {
    entityTypes: settings?.entityTypes ?? [],
    instructions: settings?.instructions ?? '',
    examples: settings?.examples ?? '',
    gleaningPasses: settings?.gleaningPasses ?? 0,
    outputMode: settings?.outputMode ?? 'auto',
  };
}

export function extractionFromMessage(message: v1.ExtractionSettings): ExtractionSettings {
  return {
    entityTypes: [...message.entityTypes],
    instructions: message.instructions,
    examples: message.examples,
    gleaningPasses: message.gleaningPasses,
    outputMode: (message.outputMode || 'auto') as ExtractionOutputMode,
  };
}

export function toResolutionMessage(settings: ResolutionSettings | undefined): v1.ResolutionSettings {
  return {
    mode: settings?.mode ?? '',
    similarityThreshold: settings?.similarityThreshold ?? 0,
    llmMergeDecisions: settings?.llmMergeDecisions ?? '',
    llmMergeFloor: settings?.llmMergeFloor ?? 0,
    summaryMaxChars: settings?.summaryMaxChars ?? 0,
  };
}

export function resolutionFromMessage(message: v1.ResolutionSettings): ResolutionSettings {
  return {
    mode: message.mode as ResolutionSettings['mode'],
    similarityThreshold: message.similarityThreshold,
    llmMergeDecisions: message.llmMergeDecisions as ResolutionSettings['llmMergeDecisions'],
    llmMergeFloor: message.llmMergeFloor,
    summaryMaxChars: message.summaryMaxChars,
  };
}

/** The chunking and model settings as the API and the events spell them. */
export function chunkingAndModelMessages(s: KbSettings): { chunking: v1.ChunkingSettings; models: v1.ModelSettings } {
  return {
    chunking: { chunkSizeTokens: s.chunkSizeTokens, chunkOverlapTokens: s.chunkOverlapTokens, splitter: s.splitter },
    models: { embeddingModel: s.embeddingModel, embeddingDimensions: s.embeddingDimensions, llmModel: s.llmModel, extractionPromptVersion: s.extractionPromptVersion },
  };
}

/** The chunking and model settings from the messages of the API or an event; absent ones are the server defaults. */
export function chunkingAndModelFromMessages(m: { chunking?: v1.ChunkingSettings; models?: v1.ModelSettings }): KbSettings {
  return {
    chunkSizeTokens: m.chunking?.chunkSizeTokens ?? 0,
    chunkOverlapTokens: m.chunking?.chunkOverlapTokens ?? 0,
    splitter: m.chunking?.splitter ?? '',
    embeddingModel: m.models?.embeddingModel ?? '',
    embeddingDimensions: m.models?.embeddingDimensions ?? 0,
    llmModel: m.models?.llmModel ?? '',
    extractionPromptVersion: m.models?.extractionPromptVersion ?? '',
  };
}

/** What indexing events carry of a knowledge base: absent extraction or resolution settings stay absent. */
export function toEventSettings(kb: KnowledgeBaseSnapshot): events.KnowledgeBaseSettings {
  const s = kb.settings;
  return {
    name: kb.name,
    ...chunkingAndModelMessages(s),
    extraction: s.extraction ? toExtractionMessage(s.extraction) : undefined,
    resolution: s.resolution ? toResolutionMessage(s.resolution) : undefined,
  };
}

/** The knowledge base as an event carries it: what the stage would have read from the store. */
export function fromEventSettings(message: events.KnowledgeBaseSettings): KnowledgeBaseSnapshot {
  const settings: KbSettings = chunkingAndModelFromMessages(message);
  if (message.extraction) settings.extraction = extractionFromMessage(message.extraction);
  if (message.resolution) settings.resolution = resolutionFromMessage(message.resolution);
  return { name: message.name, settings };
}
