import type { KbScope } from '@trellis/contracts';
import type { CommunityGraphSource, CommunityStore } from '../src/communities/community-builder';
import type { CommunityChangeLog, CommunityChanges, CommunityEntity, CommunityRecord, CommunityRelationship } from '../src/communities/community-records';
import { entitySignatures } from '../src/communities/community-content';

/** Four groups of five entities (cliques); groups 0-1 and 2-3 are paired by medium edges, the pairs by one weak edge. */
export function graph(): { entities: CommunityEntity[]; relationships: CommunityRelationship[] } {
  const entities: CommunityEntity[] = [];
  const relationships: CommunityRelationship[] = [];
  const name = (g: number, i: number) => `g${g}e${i}`;
  const link = (a: string, b: string, weight: number) =>
    relationships.push({ id: `r:${a}:${b}`, sourceId: a, targetId: b, sourceName: a, targetName: b, label: 'relates to', description: `${a} and ${b}`, weight });
  for (let g = 0; g < 4; g++) {
    for (let i = 0; i < 5; i++) entities.push({ id: name(g, i), name: name(g, i), type: 'thing', description: `Entity ${i} of group ${g}.` });
    for (let i = 0; i < 5; i++) for (let j = i + 1; j < 5; j++) link(name(g, i), name(g, j), 3);
  }
  link(name(0, 0), name(1, 0), 1);
  link(name(0, 1), name(1, 1), 1);
  link(name(2, 0), name(3, 0), 1);
  link(name(2, 1), name(3, 1), 1);
  link(name(1, 2), name(2, 2), 0.2);
  return { entities, relationships };
}

/**
 * A knowledge base's graph and communities in memory: a typed fake of both ports the builder
 * reads, keeping change records as the SQL store does (an entity is recorded when its name,
 * type, description or any of its relationships changed; see community-change-sql.ts), and
 * counting what a refresh reads.
 */
export class MemoryKnowledgeBase implements CommunityGraphSource, CommunityStore {
  rows = new Map<string, CommunityRecord>();
  saves: CommunityChanges[] = [];
  marks = new Map<string, number>();
  reads = { wholeGraph: 0, entities: 0, relationships: 0, communities: 0 };
  private built = false;

  /** `recordsChanges` false: a store whose changes were never recorded (a database built before they were). */
  constructor(
    private current: Graph,
    private readonly recordsChanges = true,
  ) {}

  /** Replaces the graph, recording every entity whose content changed, appeared or went. */
  setGraph(next: Graph): void {
    const before = entitySignatures(this.current.entities, this.current.relationships);
    const after = entitySignatures(next.entities, next.relationships);
    for (const id of new Set([...before.keys(), ...after.keys()])) if (before.get(id) !== after.get(id)) this.marks.set(id, (this.marks.get(id) ?? 0) + 1);
    this.current = next;
  }

  async exportGraph(): Promise<Graph> {
    this.reads.wholeGraph++;
    this.reads.entities += this.current.entities.length;
    this.reads.relationships += this.current.relationships.length;
    return this.current;
  }
  async getEntities(_scope: KbScope, ids: readonly string[]): Promise<CommunityEntity[]> {
    const wanted = new Set(ids);
    const found = this.current.entities.filter((e) => wanted.has(e.id));
    this.reads.entities += found.length;
    return found;
  }
  async relationshipsOfEntities(_scope: KbScope, ids: readonly string[]): Promise<CommunityRelationship[]> {
    const wanted = new Set(ids);
    const found = this.current.relationships.filter((r) => wanted.has(r.sourceId) || wanted.has(r.targetId));
    this.reads.relationships += found.length;
    return found;
  }
  async chunkIdsForRelationships(_scope: KbScope, ids: readonly string[]): Promise<Map<string, string[]>> {
    return new Map(ids.map((id) => [id, [`chunk-of-${id}`]]));
  }
  async listCommunities(): Promise<CommunityRecord[]> {
    this.reads.communities += this.rows.size;
    return [...this.rows.values()];
  }
  async listCommunitiesOfEntities(_scope: KbScope, ids: readonly string[]): Promise<CommunityRecord[]> {
    const found = [...this.rows.values()].filter((c) => c.memberIds.some((id) => ids.includes(id)));
    this.reads.communities += found.length;
    return found;
  }
  async listAssignedEntities(_scope: KbScope, ids: readonly string[]): Promise<string[]> {
    const assigned = new Set([...this.rows.values()].flatMap((c) => c.memberIds));
    return ids.filter((id) => assigned.has(id));
  }
  async listCommunityChanges(): Promise<CommunityChangeLog> {
    return { tracked: this.built && this.recordsChanges, marks: [...this.marks].map(([entityId, version]) => ({ entityId, version })) };
  }
  async countCommunities(): Promise<{ communities: number; levels: number }> {
    return { communities: this.rows.size, levels: new Set([...this.rows.values()].map((c) => c.level)).size };
  }
  async saveCommunities(_scope: KbScope, changes: CommunityChanges, refreshedAt: string): Promise<void> {
    this.saves.push(changes);
    for (const id of changes.removedIds) this.rows.delete(id);
    for (const row of changes.upserts) this.rows.set(row.id, { ...row, updatedAt: refreshedAt });
    for (const mark of changes.consumedChanges ?? []) if (this.marks.get(mark.entityId) === mark.version) this.marks.delete(mark.entityId);
    this.built = true;
  }
}

export type Graph = { entities: CommunityEntity[]; relationships: CommunityRelationship[] };
