import type { ExtractedEntity, ExtractedRelationship, ExtractionResult } from '@trellis/storage';
import { ExtractionReport } from './extraction-report';
import type { ItemReason } from './extraction-report';

const MAX_NAME = 120;
const MAX_TYPE = 40;
const MAX_LABEL = 60;
const MAX_DESCRIPTION = 1000;
const MAX_ATTRIBUTES = 20;
const MAX_ATTRIBUTE_KEY = 60;
const MAX_ATTRIBUTE_VALUE = 300;
/** Type of an entity the model gave none for, or that is only known as a relationship end. */
export const DEFAULT_ENTITY_TYPE = 'concept';
/** Type of an entity whose type is outside the knowledge base's entity types. */
export const OTHER_ENTITY_TYPE = 'other';

/**
 * Parses a model's JSON reply, tolerating code fences, text around the object and a trailing
 * comma. Returns undefined when the reply holds no parseable JSON object. Counts a reply that
 * needed digging out, or could not be read at all, in `report`.
 */
export function parseJsonLoosely(reply: string, report?: ExtractionReport): unknown {
  const direct = tryParse(reply.trim());
  if (direct !== undefined) return direct;
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(reply)?.[1] ?? reply;
  const start = fenced.indexOf('{');
  const end = fenced.lastIndexOf('}');
  const candidate = start >= 0 && end > start ? fenced.slice(start, end + 1) : '';
  const parsed = tryParse(candidate) ?? tryParse(candidate.replace(/,\s*([}\]])/g, '$1'));
  report?.count('reply', parsed === undefined ? 'dropped' : 'repaired', parsed === undefined ? 'unparseable' : 'extracted_from_text');
  return parsed;
}

function tryParse(text: string): unknown {
  if (!text.startsWith('{')) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export interface ValidationOptions {
  /** The knowledge base's entity types; others become OTHER_ENTITY_TYPE. Empty: any type. */
  readonly entityTypes?: readonly string[];
}

/**
 * Keeps the valid items of a model's output, repairs what can be repaired (whitespace,
 * lengths, missing or out-of-range fields, relationship ends missing from the entity list,
 * which become entities flagged for review) and drops the rest, counting every decision with
 * its reason. One bad item never fails the whole chunk.
 */
export function validateExtraction(raw: unknown, options: ValidationOptions = {}, report = new ExtractionReport()): ExtractionResult {
  const object = isObject(raw) ? raw : {};
  if (!isObject(raw) || (!Array.isArray(object.entities) && !Array.isArray(object.relationships))) {
    if (raw !== undefined) report.count('reply', 'dropped', 'wrong_shape');
  }
  const allowed = new Set((options.entityTypes ?? []).map((t) => t.toLowerCase()));
  const entities = new Map<string, ExtractedEntity>();
  for (const item of Array.isArray(object.entities) ? object.entities : []) {
    const checked = checkEntity(item, allowed);
    if ('drop' in checked) {
      report.count('entity', 'dropped', checked.drop);
    } else if (entities.has(checked.entity.name.toLowerCase())) {
      report.count('entity', 'dropped', 'duplicate');
    } else {
      entities.set(checked.entity.name.toLowerCase(), checked.entity);
      report.count('entity', checked.repair ? 'repaired' : 'kept', checked.repair ?? 'valid');
    }
  }
  const relationships = new Map<string, ExtractedRelationship>();
  for (const item of Array.isArray(object.relationships) ? object.relationships : []) {
    const checked = checkRelationship(item);
    if ('drop' in checked) {
      report.count('relationship', 'dropped', checked.drop);
      continue;
    }
    const r = checked.relationship;
    const key = `${r.source.toLowerCase()}|${r.label}|${r.target.toLowerCase()}`;
    if (relationships.has(key)) {
      report.count('relationship', 'dropped', 'duplicate');
      continue;
    }
    for (const endpoint of [r.source, r.target]) {
      if (entities.has(endpoint.toLowerCase())) continue;
      entities.set(endpoint.toLowerCase(), { name: endpoint, type: DEFAULT_ENTITY_TYPE, description: '', needsReview: true });
      report.count('entity', 'added', 'relationship_endpoint');
    }
    relationships.set(key, r);
    report.count('relationship', checked.repair ? 'repaired' : 'kept', checked.repair ?? 'valid');
  }
  return { entities: [...entities.values()], relationships: [...relationships.values()] };
}

type Checked<K extends string, T> = { drop: ItemReason } | ({ [key in K]: T } & { repair?: ItemReason });

function checkEntity(item: unknown, allowed: ReadonlySet<string>): Checked<'entity', ExtractedEntity> {
  if (!isObject(item)) return { drop: 'not_an_object' };
  const name = clean(item.name, MAX_NAME);
  if (name.text === '') return { drop: 'missing_name' };
  const description = clean(item.description, MAX_DESCRIPTION);
  let type = clean(item.type, MAX_TYPE).text.toLowerCase();
  let repair: ItemReason | undefined = name.truncated || description.truncated ? 'truncated' : undefined;
  if (type === '') {
    type = allowed.size > 0 ? OTHER_ENTITY_TYPE : DEFAULT_ENTITY_TYPE;
    repair ??= 'type_defaulted';
  } else if (allowed.size > 0 && !allowed.has(type)) {
    type = OTHER_ENTITY_TYPE;
    repair ??= 'type_not_allowed';
  }
  const attributes = checkAttributes(item.attributes);
  if (attributes.invalid) repair ??= 'attributes_invalid';
  const entity: ExtractedEntity = { name: name.text, type, description: description.text };
  if (Object.keys(attributes.values).length > 0) entity.attributes = attributes.values;
  return { entity, repair };
}

function checkRelationship(item: unknown): Checked<'relationship', ExtractedRelationship> {
  if (!isObject(item)) return { drop: 'not_an_object' };
  const source = clean(item.source, MAX_NAME).text;
  const target = clean(item.target, MAX_NAME).text;
  if (source === '' || target === '') return { drop: 'missing_endpoint' };
  if (source.toLowerCase() === target.toLowerCase()) return { drop: 'self_loop' };
  const description = clean(item.description, MAX_DESCRIPTION);
  const label = clean(item.label, MAX_LABEL).text.toLowerCase();
  let repair: ItemReason | undefined = description.truncated ? 'truncated' : undefined;
  if (label === '') repair ??= 'label_defaulted';
  const raw = typeof item.strength === 'string' && item.strength.trim() !== '' ? Number(item.strength) : item.strength;
  let strength = 5;
  if (typeof raw !== 'number' || !Number.isFinite(raw)) {
    repair ??= 'strength_defaulted';
  } else {
    strength = Math.min(10, Math.max(1, Math.round(raw)));
    if (strength !== raw) repair ??= 'strength_clamped';
  }
  return { relationship: { source, target, label: label || 'related to', description: description.text, strength }, repair };
}

/** Attributes as a map or as [{key, value}] pairs; scalar values only. */
function checkAttributes(raw: unknown): { values: Record<string, string>; invalid: boolean } {
  if (raw === undefined || raw === null) return { values: {}, invalid: false };
  const pairs: Array<[unknown, unknown]> = Array.isArray(raw)
    ? raw.map((p) => (isObject(p) ? [p.key ?? p.name, p.value] : [undefined, undefined]))
    : isObject(raw)
      ? Object.entries(raw)
      : [[undefined, undefined]];
  const values: Record<string, string> = {};
  let invalid = false;
  for (const [k, v] of pairs) {
    const key = clean(k, MAX_ATTRIBUTE_KEY).text;
    const value = typeof v === 'number' || typeof v === 'boolean' ? String(v) : clean(v, MAX_ATTRIBUTE_VALUE).text;
    if (key === '' || value === '' || Object.keys(values).length >= MAX_ATTRIBUTES) {
      invalid = true;
      continue;
    }
    values[key] = value;
  }
  return { values, invalid };
}

function clean(value: unknown, max: number): { text: string; truncated: boolean } {
  if (typeof value !== 'string') return { text: '', truncated: false };
  const text = value.replace(/\s+/g, ' ').trim();
  return text.length > max ? { text: text.slice(0, max).trim(), truncated: true } : { text, truncated: false };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
