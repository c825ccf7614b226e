import type { KbScope } from '@trellis/contracts';
import type { CommunityChangeLog, CommunityChanges, CommunityEntity, CommunityRecord, CommunityRelationship, CommunityReport, CommunityWrite, KeyFact } from './community-records';
import { buildHierarchy } from './community-hierarchy';
import { readRegion } from './community-region';
import type { CommunityRegion, CommunityRegionGraph, CommunityRegionStore } from './community-region';
import type { CommunityShape } from './community-hierarchy';
import { KEY_FACTS, childrenBrief, communityContent, extractiveReport, indexGraph, keyFactsFromChildren, keyFactsOf, reportBrief, reportFromChildren } from './community-report';
import type { ChildReport, CommunityContent } from './community-report';
import { LevelLimiter, visitBottomUp } from './report-schedule';
import type { SummaryUsage } from '../summary-refresher';

/** The graph communities are detected on (storage's GraphReadRepository fits). */
export interface CommunityGraphSource extends CommunityRegionGraph {
  exportGraph(scope: KbScope): Promise<{ entities: CommunityEntity[]; relationships: CommunityRelationship[] }>;
  chunkIdsForRelationships(scope: KbScope, relationshipIds: readonly string[]): Promise<Map<string, string[]>>;
}

/** Where communities are kept (storage's CommunityRepository fits). */
export interface CommunityStore extends CommunityRegionStore {
  listCommunities(scope: KbScope): Promise<CommunityRecord[]>;
  /** Applies the changes; `refreshedAt` is when the graph they were computed from was read. */
  saveCommunities(scope: KbScope, changes: CommunityChanges, refreshedAt: string): Promise<void>;
  /** The entities changed since the last refresh (see CommunityChangeLog). */
  listCommunityChanges(scope: KbScope): Promise<CommunityChangeLog>;
  countCommunities(scope: KbScope): Promise<{ communities: number; levels: number }>;
}

/** What reports need of the models: structural, so this library does not depend on them. */
export interface CommunityModels {
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /**
   * Title and summary from a brief of the community; null without an LLM (reports are then
   * extractive). `onUsage` receives the tokens each call cost.
   */
  writeReport: ((brief: string, onUsage: (usage: SummaryUsage) => void) => Promise<{ title: string; summary: string }>) | null;
}

export interface CommunityRefreshResult {
  readonly full: boolean;
  /**
   * What the refresh read: `graph` the whole graph (a full build, or the first refresh of
   * communities built before changes were recorded), `region` only the neighbourhood of what
   * changed (see readRegion).
   */
  readonly read: 'graph' | 'region';
  /** Entities and relationships read from the graph. */
  readonly entitiesRead: number;
  readonly relationshipsRead: number;
  readonly communities: number;
  readonly levels: number;
  /** Communities kept from before (same id, members and content). */
  readonly unchanged: number;
  /** Reports written anew (content changed): each an LLM call when one is configured. */
  readonly reportsWritten: number;
  readonly llmCalls: number;
  readonly llmFailures: number;
  /** Tokens the report calls cost, as the provider reported them. */
  readonly llmUsage: SummaryUsage;
  readonly removed: number;
  /** Nodes detection ran on, per level. */
  readonly redetected: readonly number[];
  readonly durationMs: number;
}

const NO_EMBEDDING = new Float32Array(0);

/** LLM reports written at once, within the shared call budget. */
const REPORT_CONCURRENCY = 4;

/**
 * Keeps a knowledge base's communities and their reports current. A refresh reads the region
 * of the graph that changed since the last one (readRegion: the branches of the hierarchy that
 * hold a changed entity, and their neighbours in no community), rebuilds the hierarchy there
 * incrementally (see buildHierarchy), and writes a report only for a community whose content
 * hash is new: any other reuses the report (and embedding) stored under that hash, so an
 * unchanged community is never summarised again, and one outside the region is not even read.
 * Its cost follows the change, not the graph. `full`, and a knowledge base whose changes were
 * not all recorded, read the whole graph instead (`full` also detects from nothing).
 */
export class CommunityBuilder {
  constructor(
    private readonly graph: CommunityGraphSource,
    private readonly store: CommunityStore,
    private readonly models: CommunityModels,
    private readonly onReportFailure: (error: Error, communityId: string) => void = () => undefined,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async refresh(scope: KbScope, options: { full?: boolean } = {}): Promise<CommunityRefreshResult> {
    const started = this.now();
    // Read first: a change recorded after this read is not consumed, and the next refresh sees it.
    const changes = await this.store.listCommunityChanges(scope);
    const local = options.full !== true && changes.tracked;
    const { entities, relationships, previous } = local ? await readRegion(this.graph, this.store, scope, changes.marks.map((m) => m.entityId)) : await this.wholeGraph(scope);
    const full = !local && (options.full === true || previous.length === 0);
    const changedIds = local ? new Set(changes.marks.map((m) => m.entityId)) : undefined;
    const hierarchy = buildHierarchy({ idParts: [scope.tenantId, scope.kbId], entities, relationships, previous: full ? [] : previous, changedIds });

    // A community kept with the same content keeps its key facts' relationships; only their
    // chunks are looked up again (a re-indexed document moves its mentions to new chunks).
    const previousById = new Map(previous.map((c) => [c.id, c]));
    const kept = (shape: CommunityShape) => {
      const before = previousById.get(shape.id);
      return before !== undefined && before.contentHash === shape.contentHash ? before : undefined;
    };
    const index = indexGraph(entities, relationships);
    const contents = new Map<string, CommunityContent>();
    const contentOf = (shape: CommunityShape) => contents.get(shape.id) ?? contents.set(shape.id, communityContent(shape.memberIds, index)).get(shape.id)!;
    // Unless no member changed: then no relationship it cites changed either (a change records
    // both ends of a relationship), and its key facts are kept with their chunks as they are.
    const untouched = (shape: CommunityShape) => changedIds !== undefined && kept(shape) !== undefined && !shape.memberIds.some((id) => changedIds.has(id));
    // Level 0 only: a higher community's facts are its children's (keyFactsFromChildren).
    const factRelationships = (shape: CommunityShape) =>
      shape.level > 0 || untouched(shape) ? [] : (kept(shape)?.keyFacts.map((f) => f.relationshipId) ?? contentOf(shape).relationships.slice(0, KEY_FACTS).map((r) => r.id));
    const factIds = [...new Set(hierarchy.communities.flatMap(factRelationships))];
    const level0Facts = (shape: CommunityShape, chunkIds: ReadonlyMap<string, readonly string[]>) => {
      const before = kept(shape);
      if (before === undefined) return keyFactsOf(contentOf(shape), chunkIds);
      return untouched(shape) ? before.keyFacts : before.keyFacts.map((f) => ({ ...f, chunkIds: chunkIds.get(f.relationshipId) ?? [] }));
    };

    const wantedKind = this.models.writeReport === null ? 'extractive' : 'llm';
    const cached = new Map(previous.filter((c) => c.kind === wantedKind).map((c) => [c.contentHash, c]));
    // A report of the content hash, of the kind wanted; or the community's own report when no
    // member changed, whatever its kind: its members were not even read (see readRegion).
    const reusable = (shape: CommunityShape) => cached.get(shape.contentHash) ?? (untouched(shape) ? kept(shape) : undefined);
    const totals = { reportsWritten: 0, llmCalls: 0, llmFailures: 0, usage: { inputTokens: 0, outputTokens: 0 } };
    // Each report as soon as its own children's are written (a community above level 0 is written
    // from them), at most REPORT_CONCURRENCY calls at once. Communities of one level with the same
    // content (a parent with one child) share one call.
    const limiter = new LevelLimiter(REPORT_CONCURRENCY);
    const calls = new Map<string, Promise<ReportText>>();
    const writing = visitBottomUp(hierarchy.communities, async (shape, written: Written[]): Promise<Written> => {
      const children = written.map(childReport);
      // Facts without their chunks: a report reads its children's fact texts, never their chunks.
      const keyFacts = shape.level === 0 ? level0Facts(shape, NO_CHUNKS) : keyFactsFromChildren(children);
      const reused = reusable(shape);
      if (reused !== undefined) return { report: { title: reused.title, summary: reused.summary, kind: reused.kind }, keyFacts, size: shape.memberIds.length, fresh: false };
      totals.reportsWritten++;
      const key = `${shape.level}\u0000${shape.contentHash}`;
      let call = calls.get(key);
      if (call === undefined) {
        const draft: ReportDraft =
          shape.level === 0
            ? { extractive: extractiveReport(contentOf(shape), keyFacts), brief: reportBrief(contentOf(shape)) }
            : { extractive: reportFromChildren(children), brief: childrenBrief(children) };
        call = this.writeReport(shape, draft, limiter, totals);
        calls.set(key, call);
      }
      return { report: await call, keyFacts, size: shape.memberIds.length, fresh: true };
    });
    // The key facts' chunks are read while the first report calls are out.
    const chunksRead = factIds.length === 0 ? Promise.resolve(new Map<string, string[]>()) : this.graph.chunkIdsForRelationships(scope, factIds);
    const [written, chunkIds] = await Promise.all([writing, chunksRead]);

    // The rows, children before parents (the hierarchy lists level by level), with their facts' chunks.
    const rows = new Map<string, CommunityWrite>();
    const freshIds: string[] = [];
    for (const shape of hierarchy.communities) {
      const { report, fresh } = written.get(shape.id)!;
      const keyFacts = shape.level === 0 ? level0Facts(shape, chunkIds) : keyFactsFromChildren(shape.childIds.map((id) => childOfRow(rows.get(id)!)));
      if (fresh) freshIds.push(shape.id);
      const embedding = reusable(shape)?.embedding ?? NO_EMBEDDING;
      rows.set(shape.id, { id: shape.id, level: shape.level, parentId: shape.parentId, memberIds: shape.memberIds, contentHash: shape.contentHash, ...report, keyFacts, embedding });
    }
    // New reports are embedded at the end, in one call for every level: a parent needs its children's text, not their vectors.
    await this.embedReports(freshIds.map((id) => rows.get(id)!), rows);
    const upserts = [...rows.values()].filter((row) => !sameRow(previousById.get(row.id), row));
    const ids = new Set(hierarchy.communities.map((c) => c.id));
    const removedIds = previous.filter((c) => !ids.has(c.id)).map((c) => c.id);
    await this.store.saveCommunities(scope, { upserts, removedIds, consumedChanges: changes.marks }, started.toISOString());
    // A region's refresh saw only its own communities: the totals come from the store.
    const counts = local ? await this.store.countCommunities(scope) : { communities: hierarchy.communities.length, levels: new Set(hierarchy.communities.map((c) => c.level)).size };
    return {
      full,
      read: local ? 'region' : 'graph',
      entitiesRead: entities.length,
      relationshipsRead: relationships.length,
      communities: counts.communities,
      levels: counts.levels,
      unchanged: counts.communities - upserts.length,
      reportsWritten: totals.reportsWritten,
      llmCalls: totals.llmCalls,
      llmFailures: totals.llmFailures,
      llmUsage: totals.usage,
      removed: removedIds.length,
      redetected: hierarchy.redetected,
      durationMs: this.now().getTime() - started.getTime(),
    };
  }

  private async wholeGraph(scope: KbScope): Promise<CommunityRegion> {
    const { entities, relationships } = await this.graph.exportGraph(scope);
    return { entities, relationships, previous: await this.store.listCommunities(scope) };
  }

  /** Embeds "title: summary" of each of these rows (once per distinct text) into `rows`. */
  private async embedReports(fresh: readonly CommunityWrite[], rows: Map<string, CommunityWrite>): Promise<void> {
    const texts = [...new Set(fresh.map((r) => `${r.title}: ${r.summary}`))];
    if (texts.length === 0) return;
    const vectors = await this.models.embed(texts);
    const byText = new Map(texts.map((t, i) => [t, vectors[i]!]));
    for (const r of fresh) rows.set(r.id, { ...r, embedding: byText.get(`${r.title}: ${r.summary}`)! });
  }

  /** One report: by the LLM within `limiter`'s slots, or extractive (without an LLM, or when the call fails). */
  private async writeReport(shape: CommunityShape, draft: ReportDraft, limiter: LevelLimiter, totals: ReportTotals): Promise<ReportText> {
    const { extractive, brief } = draft;
    const writeReport = this.models.writeReport;
    if (writeReport === null) return { title: extractive.title, summary: extractive.summary, kind: extractive.kind };
    const onUsage = (u: SummaryUsage) => ((totals.usage.inputTokens += u.inputTokens), (totals.usage.outputTokens += u.outputTokens));
    return limiter.run(shape.level, async () => {
      totals.llmCalls++;
      try {
        const written = await writeReport(brief, onUsage);
        return { title: written.title.trim() || extractive.title, summary: written.summary.trim() || extractive.summary, kind: 'llm' as const };
      } catch (error) {
        // A failing LLM must not leave a community without a report: the extractive one is true.
        totals.llmFailures++;
        this.onReportFailure(error as Error, shape.id);
        return { title: extractive.title, summary: extractive.summary, kind: extractive.kind };
      }
    });
  }
}

/** What a report call gives: the report without its key facts (those come from the graph). */
type ReportText = Omit<CommunityReport, 'keyFacts'>;

interface ReportTotals {
  reportsWritten: number;
  llmCalls: number;
  llmFailures: number;
  readonly usage: { inputTokens: number; outputTokens: number };
}

/** A community once its report is known: what its parent's report is written from. */
interface Written {
  readonly report: ReportText;
  readonly keyFacts: readonly KeyFact[];
  readonly size: number;
  /** Written anew (not reused): its embedding is still to be made. */
  readonly fresh: boolean;
}

const NO_CHUNKS: ReadonlyMap<string, readonly string[]> = new Map();

function childReport(w: Written): ChildReport {
  return { title: w.report.title, summary: w.report.summary, keyFacts: w.keyFacts, size: w.size };
}

function childOfRow(row: CommunityWrite): ChildReport {
  return { title: row.title, summary: row.summary, keyFacts: row.keyFacts, size: row.memberIds.length };
}

/** A report before the LLM: the extractive one, and the brief the LLM would write from. */
interface ReportDraft {
  readonly extractive: CommunityReport;
  readonly brief: string;
}

function sameRow(before: CommunityRecord | undefined, after: CommunityWrite): boolean {
  if (before === undefined) return false;
  return (
    before.level === after.level &&
    before.parentId === after.parentId &&
    before.contentHash === after.contentHash &&
    before.title === after.title &&
    before.summary === after.summary &&
    before.kind === after.kind &&
    sameFacts(before.keyFacts, after.keyFacts)
  );
}

function sameFacts(a: readonly KeyFact[], b: readonly KeyFact[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
