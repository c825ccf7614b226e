import type { KbScope } from '@trellis/contracts';
import { summaryParts } from './derivation';
import { embedDescribed } from './described-vectors';
import type { PendingSummary, SummaryUpdate } from './graph-records';

/** Where pending summaries are read and saved (storage's GraphSummaryRepository). */
export interface SummaryStore {
  listPendingSummaries(scope: KbScope, limit: number): Promise<PendingSummary[]>;
  saveSummaries(scope: KbScope, updates: readonly SummaryUpdate[]): Promise<number>;
}

/** What the refresher needs of the models: structural, so this library does not depend on them. */
export interface SummaryModels {
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /**
   * Condenses descriptions longer than `maxChars` together; null without an LLM (then
   * truncated). `onUsage` receives the tokens the call cost.
   */
  summarize: ((heading: string, descriptions: readonly string[], maxChars: number, onUsage?: (usage: SummaryUsage) => void) => Promise<string>) | null;
}

/** Tokens one LLM summary cost, as the provider reported them. */
export interface SummaryUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

const PAGE = 100;
/** Bounds one call; whatever is left stays pending for the next write of the knowledge base. */
const MAX_PAGES = 50;

/**
 * Brings pending summaries up to date after the graph changed (a chunk written, a stale version
 * purged, a document deleted): the description becomes the concatenation of the mentions'
 * descriptions while it fits the limit, an LLM summary past it (truncated concatenation
 * without an LLM), and the embedding is recomputed from the heading and those descriptions
 * (embedDescribed). Each save is conditional on the mentions not having changed since they
 * were read, so a crash or a race leaves rows pending, never wrong; they are picked up by the
 * next refresh of the knowledge base.
 */
export class SummaryRefresher {
  constructor(
    private readonly summaries: SummaryStore,
    private readonly models: SummaryModels,
    private readonly onSummaryFailure: (error: Error, item: PendingSummary) => void = () => undefined,
  ) {}

  /** Resolves to the number of summaries saved. */
  async refresh(scope: KbScope, maxChars: number, onUsage?: (usage: SummaryUsage) => void): Promise<number> {
    let saved = 0;
    for (let page = 0; page < MAX_PAGES; page++) {
      const pending = await this.summaries.listPendingSummaries(scope, PAGE);
      if (pending.length === 0) break;
      const updates = await this.compute(pending, maxChars, onUsage);
      const written = await this.summaries.saveSummaries(scope, updates);
      saved += written;
      // Nothing saved: every row changed under us; another writer's refresh will follow it.
      if (written === 0) break;
    }
    return saved;
  }

  private async compute(pending: readonly PendingSummary[], maxChars: number, onUsage: ((usage: SummaryUsage) => void) | undefined): Promise<SummaryUpdate[]> {
    const parts = await Promise.all(pending.map((item) => this.summaryOf(item, maxChars, onUsage)));
    const vectors = await embedDescribed((texts) => this.models.embed(texts), pending.map((item, i) => ({ heading: item.heading, headingParts: item.headingParts, descriptions: parts[i]! })));
    return pending.map((item, i) => ({
      kind: item.kind,
      id: item.id,
      summaryHash: item.summaryHash,
      description: parts[i]!.join(' '),
      embedding: vectors[i]!,
    }));
  }

  /** The summary as the parts it is embedded from: the descriptions that fit, or the LLM's one text. */
  private async summaryOf(item: PendingSummary, maxChars: number, onUsage: ((usage: SummaryUsage) => void) | undefined): Promise<string[]> {
    const whole = item.descriptions.join(' ');
    if (whole.length <= maxChars || this.models.summarize === null) return summaryParts(item.descriptions, maxChars);
    try {
      return [await this.models.summarize(item.heading, item.descriptions, maxChars, onUsage)];
    } catch (error) {
      // A failing LLM must not stop indexing: the truncated concatenation is still correct text.
      this.onSummaryFailure(error as Error, item);
      return summaryParts(item.descriptions, maxChars);
    }
  }
}
