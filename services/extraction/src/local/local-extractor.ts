import nlp from 'compromise';
import type { ExtractedEntity, ExtractedRelationship, ExtractionResult } from '@trellis/storage';
import type { Extractor } from '../extractor';
import { cleanName } from './entity-names';
import { LOCAL_EXTRACTOR_MODEL, LOCAL_RULES_VERSION } from './local-extractor-identity';
import { proseView } from './prose-view';
import { relationLabel } from './relation-label';
import type { VerbSpan } from './relation-label';

const MAX_ENTITIES_PER_CHUNK = 40;
const MAX_DESCRIPTION_CHARS = 300;
const MAX_PAIR_DISTANCE = 3;

type Span = VerbSpan;

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
 * organisations, places and other proper-noun phrases become entities, and so do the symbols
 * named in inline code (typed `code`); two entities in one sentence become a relationship
 * labelled with the relation phrase between them (`relationLabel`), described by the
 * sentence. Only the prose of the chunk is tagged (`proseView`): code, markup and admonition
 * labels never become names. Deterministic, fast, and free; an LLM extractor finds more and
 * names better. The chunk is parsed once; every match works on offsets into that one parse.
 */
export class LocalExtractor implements Extractor {
  readonly model = LOCAL_EXTRACTOR_MODEL;
  readonly promptVersion = LOCAL_RULES_VERSION;
  readonly usesLlm = false;

  async extract(text: string): Promise<ExtractionResult> {
    const entities = new Map<string, ExtractedEntity>();
    const relationships = new Map<string, ExtractedRelationship>();
    // Matching once over the whole chunk is several times cheaper than per sentence view.
    const { prose, codeMentions, readable } = proseView(text);
    const doc = nlp(prose) as unknown as View;
    // A name the tagger found over a code stand-in is the stand-in, not a name.
    const words = entitiesIn(doc).filter((m) => !codeMentions.some((c) => m.start < c.end && c.start < m.end));
    const mentions = [...words, ...codeMentions.map((c) => ({ ...c, type: 'code' }))].sort((a, b) => a.start - b.start);
    const verbs = doc.match('#Verb+').json({ offset: true });
    for (const sentence of sentenceRanges(prose)) {
      const found = mentions.filter((m) => m.start >= sentence.start && m.start < sentence.end);
      const description = clip(readable.slice(sentence.start, sentence.end));
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
          const phrase = relationLabel(verbs, a.end, b.start, prose);
          const label = phrase?.label ?? 'related to';
          const key = `${a.name.toLowerCase()}|${label}|${b.name.toLowerCase()}`;
          if (!relationships.has(key)) {
            const near = j === i + 1;
            relationships.set(key, { source: a.name, target: b.name, label, description, strength: phrase?.verbal ? (near ? 8 : 6) : near ? 4 : 2 });
          }
        }
      }
    }
    return { entities: [...entities.values()], relationships: [...relationships.values()] };
  }
}

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Where a block of markdown ends though no sentence does: a blank line, or a line that starts
 * a list item, a table row or a heading. A list of features has no full stops, and without
 * these breaks every item would pair with every other as one "sentence".
 */
const BLOCK_BREAK = /\n[ \t]*(?=\n|[*+-][ \t]|\d{1,3}[.)][ \t]|\||#{1,6}[ \t])/g;

function sentenceRanges(text: string): Array<{ start: number; end: number; text: string }> {
  const ranges: Array<{ start: number; end: number; text: string }> = [];
  let blockStart = 0;
  const blockEnds = [...text.matchAll(BLOCK_BREAK)].map((m) => m.index);
  for (const blockEnd of [...blockEnds, text.length]) {
    for (const s of segmenter.segment(text.slice(blockStart, blockEnd))) {
      const start = blockStart + s.index;
      if (s.segment.trim() !== '') ranges.push({ start, end: start + s.segment.length, text: s.segment.trim() });
    }
    blockStart = blockEnd;
  }
  return ranges;
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

function clip(sentence: string): string {
  // Blanked markup leaves runs of spaces, some before punctuation.
  const s = sentence.replace(/\s+/g, ' ').replace(/ ([.,;:!?)])/g, '$1').trim();
  return s.length <= MAX_DESCRIPTION_CHARS ? s : `${s.slice(0, MAX_DESCRIPTION_CHARS - 1)}…`;
}
