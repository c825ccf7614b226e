import type { ChatModel } from '@trellis/models';
import type { ExtractedEntity, ExtractedRelationship, ExtractionResult } from '@trellis/storage';
import type { Extractor } from './extractor';

export const EXTRACTION_PROMPT_VERSION = 'graph-v1';

const SYSTEM_PROMPT = `You build a knowledge graph from text. From the text the user gives, extract:
- entities: every named person, organisation, place, product, work, event, concept or technology the text says something about. For each: its name as written in the text, a short lower-case type, and a one or two sentence description of what the text says about it.
- relationships: pairs of those entities the text directly relates. For each: source and target (entity names exactly as in your entity list), a short label (a verb phrase such as "founded" or "is part of"), a description of the relation as the text states it, and a strength from 1 (weak, incidental) to 10 (central, explicit).
Use only facts the text states. Do not invent entities. Answer with JSON only.`;

const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['entities', 'relationships'],
  properties: {
    entities: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'type', 'description'],
        properties: { name: { type: 'string' }, type: { type: 'string' }, description: { type: 'string' } },
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
          strength: { type: 'number' },
        },
      },
    },
  },
} as const;

/** One structured-output call per chunk through any OpenAI-compatible model. */
export class LlmExtractor implements Extractor {
  readonly promptVersion = EXTRACTION_PROMPT_VERSION;

  constructor(private readonly llm: ChatModel) {}

  get model(): string {
    return this.llm.model;
  }

  async extract(text: string, context: { heading: string }): Promise<ExtractionResult> {
    const reply = await this.llm.complete(
      [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: context.heading ? `Section: ${context.heading}\n\n${text}` : text },
      ],
      { jsonSchema: { name: 'knowledge_graph', schema: SCHEMA as unknown as Record<string, unknown> }, temperature: 0 },
    );
    return validateExtraction(parseJsonLoosely(reply));
  }
}

/**
 * Parses a model's JSON reply, tolerating code fences and text around the object. Returns
 * an empty result for replies with no JSON object at all.
 */
export function parseJsonLoosely(reply: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(reply)?.[1] ?? reply;
  const start = fenced.indexOf('{');
  const end = fenced.lastIndexOf('}');
  if (start < 0 || end <= start) return {};
  try {
    return JSON.parse(fenced.slice(start, end + 1));
  } catch {
    return {};
  }
}

/**
 * Keeps the valid items of a model's output, repairing what can be repaired (trimming,
 * clamping strength, adding missing relationship endpoints as entities) and dropping the
 * rest, so one bad item never fails the whole chunk.
 */
export function validateExtraction(raw: unknown): ExtractionResult {
  const object = (raw ?? {}) as { entities?: unknown; relationships?: unknown };
  const entities = new Map<string, ExtractedEntity>();
  for (const item of Array.isArray(object.entities) ? object.entities : []) {
    const e = item as Partial<Record<keyof ExtractedEntity, unknown>>;
    const name = text(e.name, 120);
    if (name === '') continue;
    if (!entities.has(name.toLowerCase())) {
      entities.set(name.toLowerCase(), { name, type: text(e.type, 40).toLowerCase() || 'concept', description: text(e.description, 1000) });
    }
  }
  const relationships: ExtractedRelationship[] = [];
  for (const item of Array.isArray(object.relationships) ? object.relationships : []) {
    const r = item as Partial<Record<keyof ExtractedRelationship, unknown>>;
    const source = text(r.source, 120);
    const target = text(r.target, 120);
    if (source === '' || target === '' || source.toLowerCase() === target.toLowerCase()) continue;
    for (const endpoint of [source, target]) {
      if (!entities.has(endpoint.toLowerCase())) entities.set(endpoint.toLowerCase(), { name: endpoint, type: 'unreviewed', description: '' });
    }
    const strength = Number(r.strength);
    relationships.push({
      source,
      target,
      label: text(r.label, 60).toLowerCase() || 'related to',
      description: text(r.description, 1000),
      strength: Number.isFinite(strength) ? Math.min(10, Math.max(1, Math.round(strength))) : 5,
    });
  }
  return { entities: [...entities.values()], relationships };
}

function text(value: unknown, max: number): string {
  return typeof value === 'string' ? value.replace(/\s+/g, ' ').trim().slice(0, max) : '';
}
