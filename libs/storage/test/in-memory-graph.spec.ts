import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { stableId } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import type { EntityMentionWrite, RelationshipMentionWrite } from '@trellis/graph';
import { SqliteStore } from '../src/sqlite/sqlite-store';
import { SqliteDatabase } from '../src/sqlite/sqlite-database';
import { sqliteDialect } from '../src/sqlite/sqlite-dialect';
import { InMemoryGraph } from '../src/sqlite/in-memory-graph';
import { InMemoryTextIndex } from '../src/sqlite/in-memory-text-index';
import { InProcessMatrices } from '../src/sql/vector-ranking';
import { sqlRepositories } from '../src/sql/sql-repositories';
import type { Row, SqlSession, SqlValue } from '../src/sql/sql-session';
import type { TrellisRepositories } from '../src/trellis-store';
import { TEST_KB_SETTINGS, chunk, saveTestDocument, vectorFor } from './store-contract';

const dir = mkdtempSync(join(tmpdir(), 'trellis-graph-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Deterministic pseudo-random numbers in [0, 1). */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

const entityWrite = (scope: KbScope, name: string): EntityMentionWrite => ({
  entityId: stableId('ent', scope.kbId, name.toLowerCase()),
  name,
  normalizedName: name.toLowerCase(),
  type: 'x',
  description: '',
  embedding: vectorFor(name.length),
});

const relationshipWrite = (source: EntityMentionWrite, target: EntityMentionWrite, label: string, strength: number): RelationshipMentionWrite => ({
  relationshipId: stableId('rel', source.entityId, label, target.entityId),
  sourceId: source.entityId,
  targetId: target.entityId,
  label,
  description: '',
  strength,
  embedding: vectorFor(label.length),
});

/**
 * A knowledge base of `chunks` chunks, each naming a few of 40 entities and, in most, a hub
 * that takes part in more relationships than a walk reads of one entity; strengths of 1 to 3,
 * so that many edges weigh the same and their order falls to their ids.
 */
async function writeGraph(repositories: TrellisRepositories, name: string, chunks: number, seed: number): Promise<KbScope> {
  const kb = await repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name, description: '', settings: TEST_KB_SETTINGS });
  const scope = { tenantId: 't', kbId: kb.id };
  const next = random(seed);
  const names = Array.from({ length: 40 }, (_, i) => `${['Marie', 'Pierre', 'Radium', 'Polonium', 'Paris'][i % 5]} ${i}`);
  await saveTestDocument({ repositories } as never, scope, `d-${name}`);
  for (let i = 0; i < chunks; i++) {
    const written = chunk(`d-${name}`, 1, i, `passage ${i}`, i);
    await repositories.chunks.upsertChunks(scope, [written]);
    const entities = [...new Set(Array.from({ length: 2 + Math.floor(next() * 4) }, () => names[Math.floor(next() * names.length)]!))].map((n) => entityWrite(scope, n));
    if (next() < 0.8) entities.push(entityWrite(scope, 'Hub'));
    const relationships: RelationshipMentionWrite[] = [];
    for (let r = 0; r < entities.length; r++) {
      const [a, b] = [entities[Math.floor(next() * entities.length)]!, entities[Math.floor(next() * entities.length)]!];
      if (a !== b) relationships.push(relationshipWrite(a, b, `rel ${Math.floor(next() * 3)}`, 1 + Math.floor(next() * 3)));
    }
    await repositories.graphWrites.applyChunkExtraction(scope, written.id, entities, relationships);
  }
  return scope;
}

/** The reads of a second connection to the file, with no graph in memory: what SQL answers. */
function sqlReads(path: string) {
  const db = new Database(path, { readonly: true });
  const repositories = sqlRepositories(new SqliteDatabase(db), { dialect: sqliteDialect, fullText: new InMemoryTextIndex(), vectors: new InProcessMatrices(sqliteDialect.byIdScope) });
  return { graphReads: repositories.graphReads, db, close: () => db.close() };
}

const sample = <T>(next: () => number, values: readonly T[], n: number): T[] => Array.from({ length: n }, () => values[Math.floor(next() * values.length)]!);

describe('InMemoryGraph', () => {
  it('answers the walk reads as SQL does (ties, hubs, rows gone, another knowledge base), without a statement', async () => {
    const path = join(dir, 'same.db');
    const store = new SqliteStore(path);
    const scope = await writeGraph(store.repositories, 'kb', 60, 7);
    const other = await writeGraph(store.repositories, 'other', 20, 11);
    // Rows the SQL reads still return: a mention and an edge whose entity is gone, an edge a user weighted negative.
    const raw = new Database(path);
    raw.prepare(`INSERT INTO entity_mentions (tenant_id, kb_id, entity_id, chunk_id, description) VALUES ('t', ?, 'ent_gone', ?, '')`).run(scope.kbId, chunk('d-kb', 1, 0, '', 0).id);
    raw.prepare(`INSERT INTO relationships (tenant_id, kb_id, id, source_id, target_id, label) SELECT tenant_id, kb_id, 'rel_gone', id, 'ent_gone', 'x' FROM entities WHERE kb_id = ? LIMIT 1`).run(scope.kbId);
    raw.prepare(`UPDATE relationships SET weight = -2 WHERE id = (SELECT MIN(id) FROM relationships WHERE kb_id = ?)`).run(scope.kbId);
    raw.close();
    await store.warm();
    const sql = sqlReads(path);
    const memory = store.repositories.graphReads;
    const statements = vi.spyOn((store as unknown as { sql: SqliteDatabase }).sql, 'rows');
    try {
      for (const [s, documentId] of [[scope, 'd-kb'], [other, 'd-other']] as const) {
        const next = random(3);
        const { entities, relationships } = await sql.graphReads.exportGraph(s);
        const entityIds = [...entities.map((e) => e.id), 'ent_gone', 'ent_unknown'];
        const chunkIds = [...Array.from({ length: 60 }, (_, i) => chunk(documentId, 1, i, '', 0).id), 'chk_unknown'];
        const hub = stableId('ent', s.kbId, 'hub');
        expect(relationships.filter((r) => r.sourceId === hub || r.targetId === hub).length).toBeGreaterThan(6);
        for (let round = 0; round < 40; round++) {
          const ids = [hub, ...sample(next, entityIds, 1 + Math.floor(next() * 12))];
          expect(await memory.getEntityNodes(s, ids)).toEqual(await sql.graphReads.getEntityNodes(s, ids));
          for (const perEntity of [undefined, 1, 2, 3]) {
            expect(await memory.relationshipEdgesOfEntities(s, ids, perEntity)).toEqual(await sql.graphReads.relationshipEdgesOfEntities(s, ids, perEntity));
          }
          expect([...(await memory.chunkIdsForEntities(s, ids))]).toEqual([...(await sql.graphReads.chunkIdsForEntities(s, ids))]);
          const chunksAsked = sample(next, chunkIds, 1 + Math.floor(next() * 10));
          const among = round % 3 === 0 ? undefined : sample(next, entityIds, 1 + Math.floor(next() * 8));
          expect([...(await memory.entityIdsForChunks(s, chunksAsked, among))]).toEqual([...(await sql.graphReads.entityIdsForChunks(s, chunksAsked, among))]);
        }
        for (const query of ['Marie', 'pierre radium 3', 'Hub', 'paris 1', 'nothing']) {
          expect((await memory.searchEntitiesByName(s, query, 5)).map((e) => e.id)).toEqual((await sql.graphReads.searchEntitiesByName(s, query, 5)).map((e) => e.id));
        }
      }
      // The name searches read their candidates' ids and the few entities they return; nothing else did.
      expect(statements.mock.calls.map(([text]) => text).filter((text) => !/entity_name_terms|SELECT id, kb_id, name/.test(text))).toEqual([]);
    } finally {
      sql.close();
      await store.close();
    }
  });

  describe('kept in step with writes', () => {
    /** Repositories over the file with their own InMemoryGraph, on a clock the test moves; `gate` holds its reads. */
    async function graphOver(name: string, pageRows?: number, chunks = 6) {
      const path = join(dir, `${name}.db`);
      await new SqliteStore(path).close();
      const db = new SqliteDatabase(new Database(path));
      const clock = { now: 0, perRead: 0 };
      let gate: Promise<void> = Promise.resolve();
      const readsStarted = { count: 0, statements: new Set<string>() };
      const reads: SqlSession = {
        rows: async (text: string, params?: readonly SqlValue[]): Promise<Row[]> => {
          readsStarted.count++;
          readsStarted.statements.add(text);
          await gate;
          clock.now += clock.perRead;
          return db.rows(text, params);
        },
        exec: () => Promise.reject(new Error('read only')),
        each: () => Promise.reject(new Error('read only')),
      };
      const graphs = new InMemoryGraph(reads, { quietMs: 1_000, now: () => clock.now, pageRows });
      const repositories = sqlRepositories(db, { dialect: sqliteDialect, fullText: new InMemoryTextIndex(), vectors: new InProcessMatrices(sqliteDialect.byIdScope), adjacency: graphs });
      const scope = await writeGraph(repositories, 'kb', chunks, 5);
      const hold = () => {
        let release!: () => void;
        gate = new Promise((resolve) => (release = resolve));
        return release;
      };
      return { repositories, graphs, scope, clock, readsStarted, hold, path };
    }

    it('reads a graph larger than a page a page at a time, and holds it whole', async () => {
      const { graphs, scope, clock, readsStarted, path } = await graphOver('pages', 3, 30);
      clock.now = 10_000;
      await graphs.preload(scope);
      const held = graphs.current(scope)!;
      const sql = sqlReads(path);
      try {
        const { entities, relationships } = await sql.graphReads.exportGraph(scope);
        const ids = entities.map((e) => e.id);
        expect(held.size).toEqual({ entities: entities.length, relationships: relationships.length, mentions: expect.any(Number) });
        expect(readsStarted.count).toBeGreaterThan((entities.length + relationships.length) / 3);
        expect(held.edges(ids, 2)).toEqual(await sql.graphReads.relationshipEdgesOfEntities(scope, ids, 2));
        expect(held.edges(ids)).toEqual(await sql.graphReads.relationshipEdgesOfEntities(scope, ids));
        expect(held.chunkIdsOf(ids)).toEqual(await sql.graphReads.chunkIdsForEntities(scope, ids));
        // Every page is one range of an index that holds every column read: no row (with its embedding) is.
        const plans = [...readsStarted.statements].map((text) => sql.db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(Array.from(text.match(/\?/g)!, () => 'x')).map((step) => (step as { detail: string }).detail));
        expect(plans).toHaveLength(6);
        for (const plan of plans) expect(plan).toEqual([expect.stringMatching(/^(SCAN|SEARCH) \w+ USING COVERING INDEX \w+/)]);
      } finally {
        sql.close();
      }
    });

    /** A new relationship between two new entities, in a chunk of its own. */
    async function writeFact(repositories: TrellisRepositories, scope: KbScope, ordinal: number) {
      const written = chunk('d-kb', 1, ordinal, `passage ${ordinal}`, ordinal);
      await repositories.chunks.upsertChunks(scope, [written]);
      const [a, b] = [entityWrite(scope, `New ${ordinal}`), entityWrite(scope, `Other ${ordinal}`)];
      await repositories.graphWrites.applyChunkExtraction(scope, written.id, [a, b], [relationshipWrite(a, b, 'knows', 2)]);
      return { a: a.entityId, b: b.entityId, chunkId: written.id };
    }

    it('drops its copy on a write, answers from SQL until the graph has been quiet, then reads it again', async () => {
      const { repositories, graphs, scope, clock, readsStarted } = await graphOver('quiet');
      clock.now = 10_000;
      expect(graphs.current(scope)).toBeUndefined();
      await graphs.preload(scope);
      expect(graphs.current(scope)).toBeDefined();

      const fact = await writeFact(repositories, scope, 100);
      expect(graphs.current(scope)).toBeUndefined();
      // Read at once, from SQL: the write is there.
      expect((await repositories.graphReads.relationshipEdgesOfEntities(scope, [fact.a])).map((e) => e.targetId)).toEqual([fact.b]);
      expect(await repositories.graphReads.chunkIdsForEntities(scope, [fact.a])).toEqual(new Map([[fact.a, [fact.chunkId]]]));
      const reads = readsStarted.count;
      clock.now += 999;
      expect(graphs.current(scope)).toBeUndefined();
      expect(readsStarted.count).toBe(reads);
      clock.now += 1;
      expect(graphs.current(scope)).toBeUndefined();
      expect(readsStarted.count).toBe(reads + 1);
      await vi.waitFor(() => expect(graphs.current(scope)).toBeDefined());
      expect(graphs.current(scope)!.edges([fact.a]).map((e) => e.targetId)).toEqual([fact.b]);
    });

    it('keeps its copy when only summaries are saved: descriptions and embeddings are not what it holds', async () => {
      const { repositories, graphs, scope, clock } = await graphOver('summaries');
      clock.now = 10_000;
      await graphs.preload(scope);
      const held = graphs.current(scope);
      const pending = await repositories.graphSummaries.listPendingSummaries(scope, 5);
      expect(pending.length).toBeGreaterThan(0);
      const saved = await repositories.graphSummaries.saveSummaries(
        scope,
        pending.map((p) => ({ kind: p.kind, id: p.id, summaryHash: p.summaryHash, description: 'summarised', embedding: vectorFor(3) })),
      );
      expect(saved).toBe(pending.length);
      expect(graphs.current(scope)).toBe(held);
      await writeFact(repositories, scope, 100);
      expect(graphs.current(scope)).toBeUndefined();
    });

    it('keeps no copy whose reading overlapped a write', async () => {
      const { repositories, graphs, scope, clock, readsStarted, hold } = await graphOver('overlap');
      clock.now = 10_000;
      const release = hold();
      expect(graphs.current(scope)).toBeUndefined();
      await vi.waitFor(() => expect(readsStarted.count).toBe(1));
      const fact = await writeFact(repositories, scope, 100);
      release();
      await graphs.preload(scope);
      expect(graphs.current(scope)).toBeUndefined();
      clock.now += 1_000;
      await vi.waitFor(() => expect(graphs.current(scope)).toBeDefined());
      expect(graphs.current(scope)!.chunkIdsOf([fact.a])).toEqual(new Map([[fact.a, [fact.chunkId]]]));
    });

    it('reads a graph written every few seconds no more than a tenth of the time', async () => {
      const { repositories, graphs, scope, clock, readsStarted } = await graphOver('share');
      clock.now = 10_000;
      clock.perRead = 100;
      await graphs.preload(scope);
      const took = clock.now - 10_000;
      const readsOfOne = readsStarted.count;
      expect(took).toBe(100 * readsOfOne);
      await writeFact(repositories, scope, 100);
      clock.now = 10_000 + 10 * took - 1;
      expect(graphs.current(scope)).toBeUndefined();
      expect(readsStarted.count).toBe(readsOfOne);
      clock.now += 1;
      expect(graphs.current(scope)).toBeUndefined();
      await vi.waitFor(() => expect(graphs.current(scope)).toBeDefined());
      expect(readsStarted.count).toBe(2 * readsOfOne);
    });
  });
});
