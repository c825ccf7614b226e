import type { ExtractionOutputMode, KbSettings } from '@trellis/contracts';
import { createHash } from 'node:crypto';
import { stableId } from '@trellis/contracts';
import type { ChatMessage } from './chat-model';

/** Bump when the default prompt or schema changes: every cached extraction is then redone. */
export const EXTRACTION_PROMPT_VERSION = 'graph-v2';

const BASE_PROMPT = `You build a knowledge graph from text. From the text the user gives, extract:
- entities: every named person, organisation, place, product, work, event, concept or technology the text says something about. For each: its name as written in the text, a short lower-case type, a one or two sentence description of what the text says about it, and attributes: short facts about it stated in the text as key/value pairs (may be empty).
- relationships: pairs of those entities the text directly relates. For each: source and target (entity names exactly as in your entity list), a short label (a verb phrase such as "founded" or "is part of"), a description of the relation as the text states it, and a strength from 1 (weak, incidental) to 10 (central, explicit).
Use only facts the text states. Do not invent entities.
Answer with one JSON object only, of this shape:
{"entities": [{"name": "...", "type": "...", "description": "...", "attributes": [{"key": "...", "value": "..."}]}],
 "relationships": [{"source": "...", "target": "...", "label": "...", "description": "...", "strength": 7}]}`;

/** The follow-up turn of a gleaning pass. */
export const GLEANING_PROMPT = `Some entities or relationships in the text were probably missed. Answer with a JSON object of the same shape holding only the entities and relationships you did not list before (empty lists if none were missed).`;

export const EXTRACTION_SCHEMA: Record<string, unknown> = {
  type: 'object',
  additionalProperties: false,
  required: ['entities', 'relationships'],
  properties: {
    entities: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'type', 'description', 'attributes'],
        properties: {
          name: { type: 'string' },
          type: { type: 'string' },
          description: { type: 'string' },
          attributes: {
            type: 'array',
            items: { type: 'object', additionalProperties: false, required: ['key', 'value'], properties: { key: { type: 'string' }, value: { type: 'string' } } },
          },
        },
      },
    },
    relationships: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['source', 'target', 'label', 'description', 'strength'],
        properties: {
          source: { type: 'string' },
          target: { type: 'string' },
          label: { type: 'string' },
          description: { type: 'string' },
          strength: { type: 'integer', minimum: 1, maximum: 10 },
        },
      },
    },
  },
};

/** The effective extraction prompt of a knowledge base, and the version that identifies it. */
export interface ExtractionPrompt {
  readonly system: string;
  readonly entityTypes: readonly string[];
  readonly gleaningPasses: number;
  readonly outputMode: ExtractionOutputMode;
  /**
   * Part of the extraction cache key: the default version plus a hash of every override that
   * changes what the model is asked, so changed prompts never reuse stale extractions.
   */
  readonly version: string;
}

export function extractionPrompt(settings: Pick<KbSettings, 'extraction' | 'extractionPromptVersion'>): ExtractionPrompt {
  const e = settings.extraction;
  const entityTypes = e?.entityTypes ?? [];
  const instructions = e?.instructions.trim() ?? '';
  const examples = e?.examples.trim() ?? '';
  const gleaningPasses = e?.gleaningPasses ?? 0;
  const parts = [BASE_PROMPT];
  if (entityTypes.length > 0) {
    parts.push(`Use only these entity types: ${entityTypes.join(', ')}. Give an entity that fits none of them the type "other".`);
  }
  if (instructions !== '') parts.push(`Instructions for this collection:\n${instructions}`);
  if (examples !== '') parts.push(`Examples:\n${examples}`);
  const system = parts.join('\n\n');
  const overrides = [settings.extractionPromptVersion, entityTypes.join(','), instructions, examples, String(gleaningPasses)];
  const custom = overrides.some((o, i) => (i === 4 ? o !== '0' : o !== ''));
  const hash = createHash('sha256').update(JSON.stringify(overrides)).digest('hex').slice(0, 12);
  return { system, entityTypes, gleaningPasses, outputMode: e?.outputMode ?? 'auto', version: custom ? `${EXTRACTION_PROMPT_VERSION}-${hash}` : EXTRACTION_PROMPT_VERSION };
}

/** The first turn of a chunk's extraction: the prompt, and the chunk under its section heading. */
export function extractionMessages(prompt: Pick<ExtractionPrompt, 'system'>, text: string, heading: string): ChatMessage[] {
  return [
    { role: 'system', content: prompt.system },
    { role: 'user', content: heading ? `Section: ${heading}\n\n${text}` : text },
  ];
}

/** The model a knowledge base extracts with: its own, or the server's (TRELLIS_LLM_MODEL). */
export function extractionModelName(settings: Pick<KbSettings, 'llmModel'>, serverModel: string): string {
  return settings.llmModel || serverModel;
}

/** The key of a chunk's cached extraction: the same text, model and prompt give the same graph. */
export function extractionCacheKey(chunkContentHash: string, model: string, promptVersion: string): string {
  return stableId('ext', chunkContentHash, model, promptVersion);
}
