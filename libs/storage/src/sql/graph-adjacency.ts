import type { KbScope } from '@trellis/contracts';
import type { EntityNode, RelationshipEdge } from '../records';
import { compareIds } from '../row-mappers';

/** Where a store keeps its knowledge bases' graphs in memory (the standalone store's InMemoryGraph). */
export interface GraphAdjacencies {
  /** The knowledge base's graph if it holds every write announced for it; otherwise undefined (the reads go to SQL). */
  current(scope: KbScope): GraphAdjacency | undefined;
  /** Called after writes to the graph of the knowledge base, committed or not. */
  changed(kbId: string): void;
}

/**
 * One knowledge base's graph as a walk reads it, held in this process: entity names and mention
 * counts, every relationship as an edge (id, ends, weight) listed per end heaviest first, and
 * the mentions between entities and chunks in both directions. Descriptions, labels and
 * embeddings stay in the database. Answers exactly what the SQL reads of GraphReadRepository
 * answer (getEntityNodes, relationshipEdgesOfEntities, chunkIdsForEntities, entityIdsForChunks),
 * from arrays instead of index ranges: at 100k chunks a walk's reads took 10 ms of SQLite on the
 * thread that answers queries (docs/benchmarks.md).
 *
 * Ids are interned once (entities and chunks in maps, relationship ids in one string); the
 * links are typed arrays of indexes. An id met only as a mention or an end (a row since
 * deleted, which the SQL reads would still return) has an index and no name.
 */
export class GraphAdjacency {
  constructor(private readonly parts: AdjacencyParts) {}

  /** Entities, relationships and mentions held. */
  get size(): { entities: number; relationships: number; mentions: number } {
    const p = this.parts;
    return { entities: p.entityIds.length, relationships: p.relSource.length, mentions: p.mentionChunks.length };
  }

  /** In the order of `ids`, skipping ids without an entity row. */
  nodes(ids: readonly string[]): EntityNode[] {
    const p = this.parts;
    return ids.flatMap((id) => {
      const e = p.entityIndex.get(id);
      const name = e === undefined ? undefined : p.names[e];
      return name === undefined ? [] : [{ id, name, normalizedName: p.normalizedNames[e!]!, mentionCount: p.mentionCounts[e!]! }];
    });
  }

  /**
   * Relationships with either end in `entityIds`, in id order; with `perEntity`, only the first
   * that many of each entity's edges at each end, heaviest first (ties by id, descending).
   */
  edges(entityIds: readonly string[], perEntity = Infinity): RelationshipEdge[] {
    const p = this.parts;
    const picked = new Set<number>();
    for (const id of entityIds) {
      const e = p.entityIndex.get(id);
      if (e === undefined) continue;
      for (let r = p.sourceStart[e]!, end = Math.min(p.sourceEnd[e]!, r + perEntity); r < end; r++) picked.add(r);
      for (let i = p.targetStart[e]!, end = Math.min(p.targetStart[e + 1]!, i + perEntity); i < end; i++) picked.add(p.targetOrder[i]!);
    }
    const edges = [...picked].map((r) => ({ id: this.relationshipId(r), sourceId: p.entityIds[p.relSource[r]!]!, targetId: p.entityIds[p.relTarget[r]!]!, weight: p.relWeight[r]! }));
    return edges.sort((a, b) => compareIds(a.id, b.id));
  }

  /** The chunk ids that mention each entity, in chunk id order, by entity in id order; entities without mentions left out. */
  chunkIdsOf(entityIds: readonly string[]): Map<string, string[]> {
    const p = this.parts;
    const out = new Map<string, string[]>();
    for (const id of [...new Set(entityIds)].sort()) {
      const e = p.entityIndex.get(id);
      if (e === undefined || p.mentionStart[e] === p.mentionStart[e + 1]) continue;
      out.set(id, Array.from(p.mentionChunks.subarray(p.mentionStart[e], p.mentionStart[e + 1]), (c) => p.chunkIds[c]!));
    }
    return out;
  }

  /** The entity ids each chunk mentions, in id order, by chunk in id order; with `among`, only those entities; chunks without any left out. */
  entityIdsOf(chunkIds: readonly string[], among?: readonly string[]): Map<string, string[]> {
    const p = this.parts;
    const wanted = among === undefined ? null : new Set(among);
    const out = new Map<string, string[]>();
    for (const id of [...new Set(chunkIds)].sort()) {
      const c = p.chunkIndex.get(id);
      if (c === undefined) continue;
      const entities: string[] = [];
      for (let i = p.chunkMentionStart[c]!; i < p.chunkMentionStart[c + 1]!; i++) {
        const entityId = p.entityIds[p.chunkMentionEntities[i]!]!;
        if (wanted === null || wanted.has(entityId)) entities.push(entityId);
      }
      if (entities.length > 0) out.set(id, entities);
    }
    return out;
  }

  private relationshipId(r: number): string {
    return this.parts.relIds.slice(this.parts.relIdStart[r], this.parts.relIdStart[r + 1]);
  }
}

interface AdjacencyParts {
  readonly entityIndex: ReadonlyMap<string, number>;
  readonly entityIds: readonly string[];
  /** Undefined for an id without an entity row. */
  readonly names: ReadonlyArray<string | undefined>;
  readonly normalizedNames: ReadonlyArray<string | undefined>;
  readonly mentionCounts: Float64Array;
  /** Relationship ids run together; relationship r's is relIds[relIdStart[r], relIdStart[r + 1]). */
  readonly relIds: string;
  readonly relIdStart: Int32Array;
  /** Relationships grouped by source, each group heaviest first: entity e's are [sourceStart[e], sourceEnd[e]). */
  readonly relSource: Int32Array;
  readonly relTarget: Int32Array;
  readonly relWeight: Float64Array;
  readonly sourceStart: Int32Array;
  readonly sourceEnd: Int32Array;
  /** Relationship indexes grouped by target, heaviest first (ties by id, descending): entity e's are targetOrder[targetStart[e], targetStart[e + 1]). */
  readonly targetOrder: Int32Array;
  readonly targetStart: Int32Array;
  /** Entity e's chunks (indexes into chunkIds) are mentionChunks[mentionStart[e], mentionStart[e + 1]), in chunk id order. */
  readonly mentionStart: Int32Array;
  readonly mentionChunks: Int32Array;
  readonly chunkIndex: ReadonlyMap<string, number>;
  readonly chunkIds: readonly string[];
  /** Chunk c's entities are chunkMentionEntities[chunkMentionStart[c], chunkMentionStart[c + 1]), in entity id order. */
  readonly chunkMentionStart: Int32Array;
  readonly chunkMentionEntities: Int32Array;
}

/**
 * Builds a GraphAdjacency from the rows of a knowledge base read in three passes, each in the
 * order its method says (the orders of the SQL reads it replaces, which the covering indexes
 * give): entities, relationships by source, mentions by entity. Ids compare as JavaScript
 * strings do, which is SQLite's binary order for the ASCII ids Trellis makes.
 */
export class GraphAdjacencyBuilder {
  private readonly entityIndex = new Map<string, number>();
  private readonly entityIds: string[] = [];
  private readonly names: Array<string | undefined> = [];
  private readonly normalizedNames: Array<string | undefined> = [];
  private readonly mentionCounts = new Column(Float64Array);
  private readonly relIdParts: string[] = [];
  private readonly relSource = new Column(Int32Array);
  private readonly relTarget = new Column(Int32Array);
  private readonly relWeight = new Column(Float64Array);
  private readonly sourceStart = new Column(Int32Array);
  private readonly sourceEnd = new Column(Int32Array);
  private readonly mentionEntities = new Column(Int32Array);
  private readonly mentionChunks = new Column(Int32Array);
  private readonly chunkIndex = new Map<string, number>();
  private readonly chunkIds: string[] = [];
  private group: { id?: string; index: number } = { index: -1 };

  /** An entity row; before any relationship or mention. */
  entity(id: string, name: string, normalizedName: string, mentionCount: number): void {
    const e = this.entityOf(id);
    this.names[e] = name;
    // Most names are their own normal form: one string then serves both.
    this.normalizedNames[e] = normalizedName === name ? name : normalizedName;
    this.mentionCounts.set(e, mentionCount);
  }

  /** A relationship; grouped by source, each group heaviest first (ties by id, descending). */
  sourceEdge(id: string, sourceId: string, targetId: string, weight: number): void {
    const r = this.relSource.length;
    const source = this.groupOf(sourceId);
    this.relIdParts.push(id);
    this.relSource.push(source);
    this.relTarget.push(this.entityOf(targetId));
    this.relWeight.push(weight);
    if (this.sourceEnd.get(source) !== r) this.sourceStart.set(source, r);
    this.sourceEnd.set(source, r + 1);
  }

  /** A mention; grouped by entity in entity id order, each group in chunk id order. */
  mention(entityId: string, chunkId: string): void {
    let c = this.chunkIndex.get(chunkId);
    if (c === undefined) {
      c = this.chunkIds.length;
      this.chunkIndex.set(chunkId, c);
      this.chunkIds.push(chunkId);
    }
    this.mentionEntities.push(this.groupOf(entityId));
    this.mentionChunks.push(c);
  }

  build(): GraphAdjacency {
    const entities = this.entityIds.length;
    const sourceStart = this.sourceStart.sized(entities);
    const sourceEnd = this.sourceEnd.sized(entities);
    const byTarget = this.byTarget(entities);
    const relIdStart = new Int32Array(this.relIdParts.length + 1);
    this.relIdParts.forEach((id, r) => (relIdStart[r + 1] = relIdStart[r]! + id.length));
    const mentionCounts = this.mentionCounts.sized(entities);
    const byEntity = grouped(this.mentionEntities.view(), this.mentionChunks.view(), entities);
    const byChunk = grouped(this.mentionChunks.view(), this.mentionEntities.view(), this.chunkIds.length);
    return new GraphAdjacency({
      entityIndex: this.entityIndex,
      entityIds: this.entityIds,
      names: this.names,
      normalizedNames: this.normalizedNames,
      mentionCounts,
      relIds: this.relIdParts.join(''),
      relIdStart,
      relSource: this.relSource.view(),
      relTarget: this.relTarget.view(),
      relWeight: this.relWeight.view(),
      sourceStart,
      sourceEnd,
      targetOrder: byTarget.values,
      targetStart: byTarget.start,
      mentionStart: byEntity.start,
      mentionChunks: byEntity.values,
      chunkIndex: this.chunkIndex,
      chunkIds: this.chunkIds,
      chunkMentionStart: byChunk.start,
      chunkMentionEntities: byChunk.values,
    });
  }

  /** Relationship indexes grouped by target, each group heaviest first (ties by id, descending), as the source groups are. */
  private byTarget(entities: number): { start: Int32Array; values: Int32Array } {
    const targets = this.relTarget.view();
    const byTarget = grouped(targets, Int32Array.from(targets, (_, r) => r), entities);
    const weight = this.relWeight.view();
    const ids = this.relIdParts;
    const heavierFirst = (a: number, b: number) => weight[b]! - weight[a]! || compareIds(ids[b]!, ids[a]!);
    for (let e = 0; e < entities; e++) if (byTarget.start[e + 1]! - byTarget.start[e]! > 1) byTarget.values.subarray(byTarget.start[e], byTarget.start[e + 1]).sort(heavierFirst);
    return byTarget;
  }

  /** entityOf for the key of a pass's groups: rows of one group come together, so its id is looked up once. */
  private groupOf(id: string): number {
    if (id !== this.group.id) this.group = { id, index: this.entityOf(id) };
    return this.group.index;
  }

  private entityOf(id: string): number {
    let e = this.entityIndex.get(id);
    if (e === undefined) {
      e = this.entityIds.length;
      this.entityIndex.set(id, e);
      this.entityIds.push(id);
      this.names[e] = undefined;
      this.normalizedNames[e] = undefined;
    }
    return e;
  }
}

/** `values` grouped by `keys` (a counting sort: within a key, in the order given), as offsets and values. */
function grouped(keys: Int32Array, values: Int32Array, keyCount: number): { start: Int32Array; values: Int32Array } {
  const start = new Int32Array(keyCount + 1);
  for (const k of keys) start[k + 1]!++;
  for (let k = 0; k < keyCount; k++) start[k + 1]! += start[k]!;
  const next = start.slice(0, keyCount);
  const out = new Int32Array(keys.length);
  keys.forEach((k, i) => (out[next[k]!++] = values[i]!));
  return { start, values: out };
}

/**
 * A column of numbers grown by doubling, off the JavaScript heap: at 100k chunks the builder's
 * 1.3 million numbers in JS arrays (8 bytes each, their outgrown copies, then typed copies at
 * build) took the reading's heap to 110 MB for a copy that keeps 23 (docs/benchmarks.md).
 */
class Column<A extends Int32Array | Float64Array> {
  private data: A;
  length = 0;

  constructor(private readonly kind: { new (length: number): A }) {
    this.data = new kind(1024);
  }

  push(value: number): void {
    this.set(this.length, value);
  }

  get(i: number): number {
    return i < this.length ? this.data[i]! : 0;
  }

  set(i: number, value: number): void {
    if (i >= this.data.length) {
      const grown = new this.kind(Math.max(i + 1, this.data.length * 2));
      grown.set(this.data);
      this.data = grown;
    }
    this.data[i] = value;
    if (i >= this.length) this.length = i + 1;
  }

  /** The values, the buffer cut to them once (a later push grows it again). */
  view(): A {
    if (this.data.length !== this.length) this.data = this.data.slice(0, this.length) as A;
    return this.data;
  }

  /** The first `n` values, zeros past those set. */
  sized(n: number): A {
    const out = new this.kind(n);
    out.set(this.data.subarray(0, Math.min(n, this.length)));
    return out;
  }
}
