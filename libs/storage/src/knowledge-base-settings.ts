import type { events, v1 } from '@trellis/contracts';
import type { ExtractionOutputMode, ExtractionSettings, KbSettings, KnowledgeBaseRecord, ResolutionSettings } from './records';
import type { KnowledgeBaseRepository } from './repositories/knowledge-base.repository';

/**
 * Knowledge-base settings between the store's record and the protobuf messages that carry
 * them: the KnowledgeBase API message, and the snapshot indexing events carry so that no
 * stage reads the settings again per chunk.
 */

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

/** What indexing events carry of a knowledge base: absent extraction or resolution settings stay absent. */
export function toEventSettings(kb: Pick<KnowledgeBaseRecord, 'name' | 'settings'>): events.KnowledgeBaseSettings {
  const s = kb.settings;
  return {
    name: kb.name,
    ...chunkingAndModelMessages(s),
    extraction: s.extraction ? toExtractionMessage(s.extraction) : undefined,
    resolution: s.resolution ? toResolutionMessage(s.resolution) : undefined,
  };
}

/** The knowledge base as an event carries it: what the stage would have read from the store. */
export function fromEventSettings(message: events.KnowledgeBaseSettings): Pick<KnowledgeBaseRecord, 'name' | 'settings'> {
  const settings: KbSettings = {
    chunkSizeTokens: message.chunking?.chunkSizeTokens ?? 0,
    chunkOverlapTokens: message.chunking?.chunkOverlapTokens ?? 0,
    splitter: message.chunking?.splitter ?? '',
    embeddingModel: message.models?.embeddingModel ?? '',
    embeddingDimensions: message.models?.embeddingDimensions ?? 0,
    llmModel: message.models?.llmModel ?? '',
    extractionPromptVersion: message.models?.extractionPromptVersion ?? '',
  };
  if (message.extraction) settings.extraction = extractionFromMessage(message.extraction);
  if (message.resolution) settings.resolution = resolutionFromMessage(message.resolution);
  return { name: message.name, settings };
}

/**
 * The knowledge base an indexing event is about: the settings it carries, or, for an event from
 * before they travelled, the store's record (null when the knowledge base is gone).
 */
export async function knowledgeBaseOfEvent(
  context: events.EventContext,
  knowledgeBases: Pick<KnowledgeBaseRepository, 'findKnowledgeBase'>,
): Promise<Pick<KnowledgeBaseRecord, 'name' | 'settings'> | null> {
  if (context.knowledgeBase) return fromEventSettings(context.knowledgeBase);
  return knowledgeBases.findKnowledgeBase({ tenantId: context.tenantId }, context.knowledgeBaseId);
}
