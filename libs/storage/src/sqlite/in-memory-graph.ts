import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { KbScope } from '@trellis/contracts';
import { GraphAdjacencyBuilder } from '../sql/graph-adjacency';
import type { GraphAdjacency, GraphAdjacencies } from '../sql/graph-adjacency';
import type { Row, SqlSession, SqlValue } from '../sql/sql-session';
import { ENTITY_NODES_INDEX } from '../sql/schema/graph-tables';

/** Rows read per statement: about 5 ms of the event loop to take apart between two turns. */
const PAGE = 5_000;
/**
 * How long a knowledge base's graph must go unwritten before it is read into memory. While
 * an ingest writes it every few milliseconds a copy would be stale before it was whole, and
 * each read of it (a second or two of a read thread at 100k chunks) would be wasted.
 */
export const GRAPH_QUIET_MS = 2_000;
/**
 * The largest share of the time a knowledge base's graph is read into memory: one written every
 * few seconds is read again no sooner than ten times as long as its last reading took.
 */
const MAX_READING_SHARE = 0.1;

interface KbGraph {
  readonly scope: KbScope;
  adjacency?: GraphAdjacency;
  /** Generation of the last write announced for the knowledge base (-1: none since it was first asked for). */
  changedAt: number;
  building?: Promise<void>;
  /** When the last reading began and how long it took (ms). */
  lastReading?: { startedAt: number; tookMs: number };
}

export interface InMemoryGraphOptions {
  readonly quietMs?: number;
  /** Rows read per statement (PAGE). */
  readonly pageRows?: number;
  readonly now?: () => number;
}

const keyOf = (scope: KbScope) => `${scope.tenantId}\u0000${scope.kbId}`;

/**
 * The standalone store's graph structure in memory (GraphAdjacency), per knowledge base: what
 * a graph walk reads, answered without a statement. SQLite has one writer, this process, so
 * every write is announced (`changed`), and a copy is used only while no write was announced
 * since its reading began: a write drops it, and the reads go to SQL again until a new copy is
 * read, once the graph has been left unwritten for GRAPH_QUIET_MS (the next read after that
 * starts it, on the read threads; reads go on to SQL while it is read), and no more than a tenth
 * of the time (MAX_READING_SHARE). Answers never depend on which of the two serves them; only
 * their cost does.
 */
export class InMemoryGraph implements GraphAdjacencies {
  private readonly kbs = new Map<string, KbGraph>();
  private readonly lastChange = new Map<string, number>();
  private generation = 0;
  private readonly quietMs: number;
  private readonly now: () => number;
  private readonly pageRows: number;

  /** `reads` serves the reads that build a copy (the SQLite read threads). */
  constructor(
    private readonly reads: SqlSession,
    options: InMemoryGraphOptions = {},
  ) {
    this.quietMs = options.quietMs ?? GRAPH_QUIET_MS;
    this.now = options.now ?? Date.now;
    this.pageRows = options.pageRows ?? PAGE;
  }

  current(scope: KbScope): GraphAdjacency | undefined {
    const kb = this.entry(scope);
    if (kb.adjacency !== undefined) return kb.adjacency;
    if (kb.building === undefined && this.due(kb)) void this.build(kb);
    return undefined;
  }

  private due(kb: KbGraph): boolean {
    const now = this.now();
    if (now - (this.lastChange.get(kb.scope.kbId) ?? -Infinity) < this.quietMs) return false;
    return kb.lastReading === undefined || now - kb.lastReading.startedAt >= kb.lastReading.tookMs / MAX_READING_SHARE;
  }

  /** Called after writes to the graph of the knowledge base, committed or not. */
  changed(kbId: string): void {
    this.generation++;
    this.lastChange.set(kbId, this.now());
    for (const kb of this.kbs.values()) {
      if (kb.scope.kbId !== kbId) continue;
      kb.adjacency = undefined;
      kb.changedAt = this.generation;
    }
  }

  /** Reads the knowledge base's graph into memory now, unwritten or not (the store's warming); one attempt. */
  async preload(scope: KbScope): Promise<void> {
    const kb = this.entry(scope);
    if (kb.adjacency === undefined) await (kb.building ?? this.build(kb));
  }

  private entry(scope: KbScope): KbGraph {
    const key = keyOf(scope);
    let kb = this.kbs.get(key);
    if (kb === undefined) {
      kb = { scope, changedAt: -1 };
      this.kbs.set(key, kb);
    }
    return kb;
  }

  /**
   * Kept only if no write was announced since it began: a write committed before it began is in
   * what it reads, and one announced after may be in part of it. A failed read (the store
   * closing) leaves the reads on SQL; the next due read tries again.
   */
  private build(kb: KbGraph): Promise<void> {
    const startedAt = this.generation;
    const started = this.now();
    kb.building = readAdjacency(this.reads, kb.scope, this.pageRows)
      .then(
        (adjacency) => {
          if (kb.changedAt <= startedAt) kb.adjacency = adjacency;
        },
        () => undefined,
      )
      .finally(() => {
        kb.lastReading = { startedAt: started, tookMs: this.now() - started };
        kb.building = undefined;
      });
    return kb.building;
  }
}

/** The knowledge base's graph, in the three orders GraphAdjacencyBuilder takes, a page at a time over covering indexes. */
async function readAdjacency(session: SqlSession, scope: KbScope, pageRows: number): Promise<GraphAdjacency> {
  const b = new GraphAdjacencyBuilder();
  const scoped = [scope.tenantId, scope.kbId];
  await eachRow(
    session,
    pageRows,
    (after) => `SELECT id, name, normalized_name, mention_count FROM entities INDEXED BY ${ENTITY_NODES_INDEX} WHERE +tenant_id = ? AND +kb_id = ?${after('id')} ORDER BY id`,
    scoped,
    (r) => [String(r.id)],
    (r) => b.entity(String(r.id), String(r.name), String(r.normalized_name), Number(r.mention_count)),
  );
  // An entity's edges as its source, heaviest first (ties by id, descending), as the walk reads them.
  await eachRow(
    session,
    pageRows,
    (after) =>
      `SELECT id, source_id, target_id, weight FROM relationships INDEXED BY relationship_heaviest_by_source WHERE tenant_id = ? AND kb_id = ?${after('source_id, weight, id', '<')} ORDER BY source_id DESC, weight DESC, id DESC`,
    scoped,
    (r) => [String(r.source_id), Number(r.weight), String(r.id)],
    (r) => b.sourceEdge(String(r.id), String(r.source_id), String(r.target_id), Number(r.weight)),
  );
  await eachRow(
    session,
    pageRows,
    (after) => `SELECT entity_id, chunk_id FROM entity_mentions INDEXED BY entity_mentions_of_entity WHERE +tenant_id = ? AND +kb_id = ?${after('entity_id, chunk_id')} ORDER BY entity_id, chunk_id`,
    scoped,
    (r) => [String(r.entity_id), String(r.chunk_id)],
    (r) => b.mention(String(r.entity_id), String(r.chunk_id)),
  );
  return b.build();
}

/** A condition on the sort key past the last row read (`after(columns)`), empty on the first page. */
type AfterCondition = (columns: string, comparison?: '>' | '<') => string;

/** Every row of `sql`, `pageRows` at a time: each page starts past the sort key (`cursor`) of the one before. */
async function eachRow(session: SqlSession, pageRows: number, sql: (after: AfterCondition) => string, params: readonly SqlValue[], cursor: (row: Row) => SqlValue[], onRow: (row: Row) => void): Promise<void> {
  const first = `${sql(() => '')} LIMIT ${pageRows}`;
  const next = `${sql((columns, comparison = '>') => ` AND (${columns}) ${comparison} (${columns.split(',').map(() => '?').join(', ')})`)} LIMIT ${pageRows}`;
  for (let rows = await session.rows(first, params); ; ) {
    for (const row of rows) onRow(row);
    if (rows.length < pageRows) return;
    await yieldToEventLoop();
    rows = await session.rows(next, [...params, ...cursor(rows.at(-1)!)]);
  }
}
