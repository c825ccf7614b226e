import type { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';

/** What one drill left behind, against the same passages indexed by a clean run. */
export interface DrillOutcome {
  readonly drill: string;
  readonly documents: number;
  /** Documents the clean run graphed that the drill did not, and graph rows it lacks. */
  readonly lost: number;
  /** Graph rows the clean run does not have (a replayed write made twice). */
  readonly duplicated: number;
  /** Rows both have with other provenance counts, description or weight (a mention counted twice or lost). */
  readonly changed: number;
  /** Documents still in a non-terminal status after the drill's run quiesced. */
  readonly stuck: number;
}

/**
 * Rows by identity (ids derive from tenant, KB and normalised names), each with its
 * provenance counts, derived description and weight: a lost or duplicated event changes one of
 * them, and none may depend on the order in which chunks were processed.
 */
export function graphRows(graph: v1.Subgraph): Map<string, string> {
  const rows = new Map<string, string>();
  for (const e of graph.entities) rows.set(`entity ${e.id}`, `${e.name}|${e.mentionCount}|${e.description}`);
  for (const r of graph.relationships) rows.set(`relationship ${r.id}`, `${r.weight}|${r.chunkIds.length}`);
  return rows;
}

/** Compares a drill's knowledge base with the clean run's of the same name and passages. */
export async function drillOutcome(drill: string, kb: string, drilled: TrellisClient, clean: TrellisClient): Promise<DrillOutcome> {
  const [documents, reference] = await Promise.all([drilled.listAllDocuments(kb), clean.listAllDocuments(kb)]);
  const graphed = new Set(documents.filter((d) => d.status === 'INDEX_STATUS_GRAPHED').map((d) => d.sourceUri));
  const [mine, theirs] = [graphRows(await drilled.exportGraph(kb)), graphRows(await clean.exportGraph(kb))];
  let lost = reference.filter((d) => d.status === 'INDEX_STATUS_GRAPHED' && !graphed.has(d.sourceUri)).length;
  let duplicated = 0;
  let changed = 0;
  for (const key of theirs.keys()) if (!mine.has(key)) lost++;
  for (const [key, value] of mine) {
    if (!theirs.has(key)) duplicated++;
    else if (theirs.get(key) !== value) changed++;
  }
  const stuck = documents.filter((d) => d.status !== 'INDEX_STATUS_GRAPHED' && d.status !== 'INDEX_STATUS_FAILED').length;
  return { drill, documents: documents.length, lost, duplicated, changed, stuck };
}

/** The drills' table, as the closing notes and docs/benchmarks.md quote it. */
export function drillTable(outcomes: readonly DrillOutcome[]): string {
  const lines = ['| drill | documents | lost | duplicated | changed | stuck |', '| --- | --- | --- | --- | --- | --- |'];
  for (const o of outcomes) lines.push(`| ${o.drill} | ${o.documents} | ${o.lost} | ${o.duplicated} | ${o.changed} | ${o.stuck} |`);
  return lines.join('\n');
}
