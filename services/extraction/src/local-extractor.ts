import nlp from 'compromise';
import type { ExtractedEntity, ExtractedRelationship, ExtractionResult } from '@trellis/storage';
import type { Extractor } from './extractor';

const MAX_ENTITIES_PER_CHUNK = 40;
const MAX_DESCRIPTION_CHARS = 300;
const MAX_PAIR_DISTANCE = 3;

interface Span {
  text: string;
  offset: { start: number; length: number };
}

/** The subset of compromise's View API used here. */
interface View {
  json(options: { offset: true }): Span[];
  people(): View;
  organizations(): View;
  places(): View;
  match(pattern: string): View;
  not(pattern: string): View;
  if(pattern: string): View;
}

interface Found {
  name: string;
  type: string;
  /** Character offsets in the chunk. */
  start: number;
  end: number;
}

/**
 * Extraction without a language model, using compromise's bundled English model: people,
 * organisations, places and other proper-noun phrases become entities; two entities in one
 * sentence become a relationship labelled with the verb phrase between them, described by
 * the sentence. Deterministic, fast, and free; an LLM extractor finds more and names better.
 * The chunk is parsed once; every match works on offsets into that one parse.
 */
export class LocalExtractor implements Extractor {
  readonly model = 'local-compromise';
  readonly promptVersion = 'rules-v3';

  async extract(text: string): Promise<ExtractionResult> {
    const entities = new Map<string, ExtractedEntity>();
    const relationships = new Map<string, ExtractedRelationship>();
    // Matching once over the whole chunk is several times cheaper than per sentence view.
    const doc = nlp(text) as unknown as View;
    const mentions = entitiesIn(doc);
    const verbs = doc.match('#Verb+').json({ offset: true });
    for (const sentence of sentenceRanges(text)) {
      const found = mentions.filter((m) => m.start >= sentence.start && m.start < sentence.end);
      const description = clip(sentence.text);
      for (const f of found) {
        const key = f.name.toLowerCase();
        if (!entities.has(key) && entities.size < MAX_ENTITIES_PER_CHUNK) entities.set(key, { name: f.name, type: f.type, description });
      }
      for (let i = 0; i < found.length; i++) {
        for (let j = i + 1; j < found.length && j <= i + MAX_PAIR_DISTANCE; j++) {
          const a = found[i]!;
          const b = found[j]!;
          if (a.name.toLowerCase() === b.name.toLowerCase()) continue;
          if (!entities.has(a.name.toLowerCase()) || !entities.has(b.name.toLowerCase())) continue;
          const verb = verbBetween(verbs, a.end, b.start, text);
          const label = verb ?? 'related to';
          const key = `${a.name.toLowerCase()}|${label}|${b.name.toLowerCase()}`;
          if (!relationships.has(key)) {
            relationships.set(key, { source: a.name, target: b.name, label, description, strength: verb ? (j === i + 1 ? 8 : 6) : j === i + 1 ? 4 : 2 });
          }
        }
      }
    }
    return { entities: [...entities.values()], relationships: [...relationships.values()] };
  }
}

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

function sentenceRanges(text: string): Array<{ start: number; end: number; text: string }> {
  return [...segmenter.segment(text)].map((s) => ({ start: s.index, end: s.index + s.segment.length, text: s.segment.trim() })).filter((s) => s.text !== '');
}

/** Every entity mention in the chunk, longest names winning where names overlap. */
function entitiesIn(doc: View): Found[] {
  const found = new Map<string, Found>();
  const add = (view: View, type: string) => {
    for (const span of view.json({ offset: true })) {
      const name = cleanName(span.text);
      if (name === null) continue;
      const key = `${span.offset.start}:${name.toLowerCase()}`;
      if (found.has(key)) continue;
      found.set(key, { name, type, start: span.offset.start, end: span.offset.start + span.offset.length });
    }
  };
  add(doc.people(), 'person');
  add(doc.organizations(), 'organization');
  add(doc.places(), 'place');
  add(doc.match('#ProperNoun+ (of|de|the)? #ProperNoun+'), 'concept');
  add(doc.match('#ProperNoun+'), 'concept');
  add(doc.match('#Value? #Date+').not('#Preposition').if('#Value'), 'date');
  // Keep the longest name where one contains another ("Curie" inside "Marie Curie").
  const all = [...found.values()];
  const kept = all.filter((f) => !all.some((o) => o !== f && o.end - o.start > f.end - f.start && o.start <= f.start && o.end >= f.end));
  return kept.sort((a, b) => a.start - b.start);
}

/** The first verb between two entities, with a trailing preposition ("was born in"). */
function verbBetween(verbs: readonly Span[], from: number, to: number, text: string): string | null {
  if (to - from > 160) return null;
  const verb = verbs.find((v) => v.offset.start >= from && v.offset.start + v.offset.length <= to);
  if (!verb) return null;
  const end = verb.offset.start + verb.offset.length;
  const after = /^\s+(in|at|on|of|by|with|for|from|to|into|as)\b/i.exec(text.slice(end, Math.min(to, end + 8)))?.[1];
  const phrase = `${verb.text}${after ? ` ${after}` : ''}`.toLowerCase().replace(/[^\p{L}\p{N}' -]/gu, '').trim();
  return phrase === '' ? null : phrase.slice(0, 60);
}

function cleanName(raw: string): string | null {
  const name = raw
    .replace(/['’]s$/u, '')
    // Drop leading common words ("brother Jacques Curie" → "Jacques Curie").
    .replace(/^(?:[\p{Ll}][\p{L}'-]*\s+)+(?=\p{Lu})/u, '')
    .replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N})]+$/gu, '')
    .replace(/^(the|a|an)\s+/i, '')
    .replace(/\s+/g, ' ')
    .trim()
    // A closing parenthesis belongs to the name only when the name opened it.
    .replace(/\)+$/, (closing, offset: number, whole: string) => (whole.slice(0, offset).includes('(') ? closing : ''));
  if (name.length < 2 || name.length > 80) return null;
  if (name.split(' ').length > 8) return null;
  // Names carry a capital or a number; "first woman" and "few months" are not entities.
  if (!/\p{Lu}|\d/u.test(name)) return null;
  return name;
}

function clip(sentence: string): string {
  const s = sentence.replace(/\s+/g, ' ').trim();
  return s.length <= MAX_DESCRIPTION_CHARS ? s : `${s.slice(0, MAX_DESCRIPTION_CHARS - 1)}…`;
}
