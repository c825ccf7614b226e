import nlp from 'compromise';
import type { ExtractedEntity, ExtractedRelationship, ExtractionResult } from '@trellis/storage';
import type { Extractor } from './extractor';

const MAX_ENTITIES_PER_CHUNK = 40;
const MAX_DESCRIPTION_CHARS = 300;
const MAX_PAIR_DISTANCE = 3;

type CompromiseView = { out(format: 'array'): unknown };

interface Found {
  name: string;
  type: string;
  at: number;
}

/**
 * Extraction without a language model, using compromise's bundled English model: people,
 * organisations, places and other proper-noun phrases become entities; two entities in one
 * sentence become a relationship labelled with the verb phrase between them, described by
 * the sentence. Deterministic, fast, and free; an LLM extractor finds more and names better.
 */
export class LocalExtractor implements Extractor {
  readonly model = 'local-compromise';
  readonly promptVersion = 'rules-v2';

  async extract(text: string): Promise<ExtractionResult> {
    const entities = new Map<string, ExtractedEntity>();
    const relationships = new Map<string, ExtractedRelationship>();
    const sentences = nlp(text).sentences().out('array') as string[];
    for (const sentence of sentences) {
      const found = this.entitiesIn(sentence);
      const description = clip(sentence);
      for (const f of found) {
        const key = f.name.toLowerCase();
        if (!entities.has(key) && entities.size < MAX_ENTITIES_PER_CHUNK) entities.set(key, { name: f.name, type: f.type, description });
      }
      for (let i = 0; i < found.length; i++) {
        for (let j = i + 1; j < found.length && j <= i + MAX_PAIR_DISTANCE; j++) {
          const a = found[i]!;
          const b = found[j]!;
          if (!entities.has(a.name.toLowerCase()) || !entities.has(b.name.toLowerCase())) continue;
          const between = sentence.slice(a.at + a.name.length, b.at);
          const verb = verbPhrase(between);
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

  private entitiesIn(sentence: string): Found[] {
    const doc = nlp(sentence);
    const found = new Map<string, Found>();
    const add = (view: CompromiseView, type: string) => {
      for (const raw of view.out('array') as string[]) {
        const name = cleanName(raw);
        if (name === null) continue;
        const key = name.toLowerCase();
        if (found.has(key)) continue;
        const at = sentence.indexOf(name);
        found.set(key, { name, type, at: at < 0 ? sentence.length : at });
      }
    };
    add(doc.people(), 'person');
    add(doc.organizations(), 'organization');
    add(doc.places(), 'place');
    add(doc.match('#ProperNoun+ (of|de|the)? #ProperNoun+'), 'concept');
    add(doc.match('#ProperNoun+'), 'concept');
    add(doc.match('#Value? #Date+').not('#Preposition').if('#Value'), 'date');
    // Keep the longest name where one contains another ("Curie" inside "Marie Curie").
    const names = [...found.values()];
    const kept = names.filter((f) => !names.some((o) => o !== f && o.name.length > f.name.length && o.at <= f.at && o.at + o.name.length >= f.at + f.name.length));
    return kept.sort((a, b) => a.at - b.at);
  }
}

function verbPhrase(between: string): string | null {
  if (between.trim() === '' || between.length > 160) return null;
  const verbs = nlp(between).verbs();
  const first = (verbs.out('array') as string[])[0];
  if (!first) return null;
  // Keep the verb with a trailing preposition ("was born in", "worked with").
  const at = between.indexOf(first);
  const after = between.slice(at + first.length).match(/^\s+(in|at|on|of|by|with|for|from|to|into|as)\b/i)?.[1];
  const phrase = `${first}${after ? ` ${after}` : ''}`.toLowerCase().replace(/[^\p{L}\p{N}' -]/gu, '').trim();
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
    .trim();
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
