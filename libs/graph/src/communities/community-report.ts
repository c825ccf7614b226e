import type { CommunityEntity, CommunityRelationship, CommunityReport, KeyFact } from './community-records';

/** How many entities and relationships a report names, and how long its summary may grow. */
const TOP_ENTITIES = 5;
/** Key facts per report: the heaviest relationships inside the community. */
export const KEY_FACTS = 5;
const SUMMARY_CHARS = 900;
/** The brief an LLM reads: bounded, so one call's cost does not grow with the community. */
const BRIEF_ENTITIES = 20;
const BRIEF_RELATIONSHIPS = 30;
const BRIEF_DESCRIPTION_CHARS = 300;

/** A community's entities and the relationships among them, central ones first. */
export interface CommunityContent {
  /** By weighted degree inside the community (highest first), then name. */
  readonly entities: readonly CommunityEntity[];
  /** Relationships with both ends inside and a positive weight, heaviest first, then id. */
  readonly relationships: readonly CommunityRelationship[];
}

/** The graph indexed for reports: entities by id, and each entity's relationships. */
export interface CommunityGraphIndex {
  readonly entities: ReadonlyMap<string, CommunityEntity>;
  readonly incident: ReadonlyMap<string, readonly CommunityRelationship[]>;
}

export function indexGraph(entities: readonly CommunityEntity[], relationships: readonly CommunityRelationship[]): CommunityGraphIndex {
  const incident = new Map<string, CommunityRelationship[]>();
  for (const r of relationships) {
    for (const end of r.sourceId === r.targetId ? [r.sourceId] : [r.sourceId, r.targetId]) {
      const list = incident.get(end);
      if (list) list.push(r);
      else incident.set(end, [r]);
    }
  }
  return { entities: new Map(entities.map((e) => [e.id, e])), incident };
}

/** The members of a community ranked by centrality: what every report is written from. */
export function communityContent(memberIds: readonly string[], graph: CommunityGraphIndex): CommunityContent {
  const members = new Set(memberIds);
  const inside = new Map<string, CommunityRelationship>();
  for (const id of memberIds) {
    for (const r of graph.incident.get(id) ?? []) if (r.weight > 0 && members.has(r.sourceId) && members.has(r.targetId)) inside.set(r.id, r);
  }
  const degree = new Map<string, number>();
  for (const r of inside.values()) for (const end of [r.sourceId, r.targetId]) degree.set(end, (degree.get(end) ?? 0) + r.weight);
  const ranked = memberIds
    .map((id) => graph.entities.get(id))
    .filter((e): e is CommunityEntity => e !== undefined)
    .sort((a, b) => (degree.get(b.id) ?? 0) - (degree.get(a.id) ?? 0) || a.name.localeCompare(b.name) || (a.id < b.id ? -1 : 1));
  const heaviest = [...inside.values()].sort((a, b) => b.weight - a.weight || (a.id < b.id ? -1 : 1));
  return { entities: ranked, relationships: heaviest };
}

/** "A, B and C": the names of the most central entities. */
export function titleOf(content: CommunityContent): string {
  const names = content.entities.slice(0, 3).map((e) => e.name);
  const rest = content.entities.length - names.length;
  const list = names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  return rest > 0 ? `${list} (+${rest} more)` : list;
}

/** The central relationships, as facts citing their relationship (chunks are added by the caller). */
export function keyFactsOf(content: CommunityContent, chunkIds: ReadonlyMap<string, readonly string[]>): KeyFact[] {
  return content.relationships.slice(0, KEY_FACTS).map((r) => ({
    text: `${r.sourceName} ${r.label} ${r.targetName}${r.description ? `: ${r.description}` : ''}`,
    relationshipId: r.id,
    chunkIds: chunkIds.get(r.id) ?? [],
  }));
}

/**
 * The report without a language model: the title from the most central entities, the summary
 * from their own summaries (first sentence each), and the central relationships as key facts.
 */
export function extractiveReport(content: CommunityContent, keyFacts: readonly KeyFact[]): CommunityReport {
  const lines = content.entities.slice(0, TOP_ENTITIES).map((e) => `${e.name} (${e.type}): ${withStop(firstSentence(e.description) || 'no description')}`);
  return { title: titleOf(content), summary: clip(lines.join(' '), SUMMARY_CHARS), keyFacts, kind: 'extractive' };
}

/** What an LLM reads to write the report: the central entities and relationships, bounded. */
export function reportBrief(content: CommunityContent): string {
  const entities = content.entities.slice(0, BRIEF_ENTITIES).map((e) => `- ${e.name} (${e.type}): ${clip(e.description, BRIEF_DESCRIPTION_CHARS)}`);
  const relationships = content.relationships
    .slice(0, BRIEF_RELATIONSHIPS)
    .map((r) => `- ${r.sourceName} ${r.label} ${r.targetName} (weight ${r.weight}): ${clip(r.description, BRIEF_DESCRIPTION_CHARS)}`);
  return `Entities (${content.entities.length}, most central first):\n${entities.join('\n')}\n\nRelationships (${content.relationships.length}, strongest first):\n${relationships.join('\n')}`;
}

/** What a community above level 0 is written from: its children's reports (their members are not read). */
export interface ChildReport {
  readonly title: string;
  readonly summary: string;
  readonly keyFacts: readonly KeyFact[];
  readonly size: number;
}

/** Children by size, largest first, then title: the order an ancestor's report follows. */
function bySize(children: readonly ChildReport[]): ChildReport[] {
  return [...children].sort((a, b) => b.size - a.size || a.title.localeCompare(b.title));
}

/**
 * An ancestor's key facts: the most central fact of each of its largest children, then their
 * second ones, and so on. Each child's facts are its heaviest relationships, so these are the
 * heaviest of the groups that make up most of the ancestor.
 */
export function keyFactsFromChildren(children: readonly ChildReport[]): KeyFact[] {
  const ordered = bySize(children);
  const out: KeyFact[] = [];
  for (let rank = 0; out.length < KEY_FACTS && ordered.some((c) => c.keyFacts.length > rank); rank++) {
    for (const child of ordered) if (out.length < KEY_FACTS && child.keyFacts[rank] !== undefined) out.push(child.keyFacts[rank]!);
  }
  return out;
}

/**
 * The report of a community above level 0 without a language model, written from its
 * children's reports as a hierarchical summary is (the members' own content went into those):
 * the titles of its two largest children, their summaries' lead sentences in order of size,
 * and keyFactsFromChildren.
 */
export function reportFromChildren(children: readonly ChildReport[]): CommunityReport {
  const ordered = bySize(children);
  const rest = ordered.length - 2;
  const title = ordered.slice(0, 2).map((c) => c.title).join('; ') + (rest > 0 ? ` (+${rest} more groups)` : '');
  const summary = clip(ordered.map((c) => withStop(firstSentence(c.summary) || c.title)).join(' '), SUMMARY_CHARS);
  return { title, summary, keyFacts: keyFactsFromChildren(children), kind: 'extractive' };
}

/** What an LLM reads to write an ancestor's report: its largest children's reports, bounded. */
export function childrenBrief(children: readonly ChildReport[]): string {
  const ordered = bySize(children);
  const lines = ordered.slice(0, BRIEF_ENTITIES).map((c) => `- ${c.title} (${c.size} entities): ${clip(c.summary, BRIEF_DESCRIPTION_CHARS)}`);
  const facts = keyFactsFromChildren(children).map((f) => `- ${clip(f.text, BRIEF_DESCRIPTION_CHARS)}`);
  return `Groups (${ordered.length}, largest first):\n${lines.join('\n')}\n\nCentral facts:\n${facts.join('\n')}`;
}

function withStop(sentence: string): string {
  return /[.!?…]$/.test(sentence) ? sentence : `${sentence}.`;
}

function firstSentence(text: string): string {
  const match = /^(.+?[.!?])(\s|$)/.exec(text.trim());
  return clip(match ? match[1]! : text.trim(), 200);
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.8 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
