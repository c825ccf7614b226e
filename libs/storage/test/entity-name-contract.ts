import { describe, expect, it } from 'vitest';
import { stableId } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import type { EntityMentionWrite, GraphEditMeta } from '@trellis/graph';
import type { TrellisStore } from '../src/trellis-store';
import { entityNameTerms } from '../src/sql/entity-name-terms-sql';
import { TEST_KB_SETTINGS, chunk, eachStoreWithKnowledgeBase, saveTestDocument, vectorFor } from './store-contract';

export interface NameTermRow {
  tenantId: string;
  kbId: string;
  entityId: string;
  term: string;
}

/** Every row of entity_name_terms, read by the engine's own means (the store has no API for them). */
export type ReadTerms = (store: TrellisStore) => Promise<NameTermRow[]>;

const sortTerms = (rows: readonly NameTermRow[]) => rows.map((r) => `${r.tenantId} ${r.kbId} ${r.entityId} ${r.term}`).sort();

/**
 * Entities found by the words of their names (entity_name_terms), for every TrellisStore
 * adapter: whole words and word starts, kept in step with every write that creates, renames,
 * merges, deletes or restores an entity, scoped to its tenant and knowledge base.
 */
export function describeEntityNameContract(name: string, makeStore: () => Promise<TrellisStore>, readTerms: ReadTerms): void {
  describe(`${name}: entities by name`, () => {
    let store: TrellisStore;
    let scope: KbScope;
    let edits = 0;
    const scopes: KbScope[] = [];

    eachStoreWithKnowledgeBase(makeStore, (s, k) => {
      store = s;
      scope = k;
      scopes.splice(0, scopes.length, k);
    });

    /**
     * The words table holds exactly the words of the entities there are: a word left behind is
     * invisible to searches (its entity is not read), so it is checked on the table itself.
     */
    async function expectTermsInStep(): Promise<void> {
      const expected: NameTermRow[] = [];
      for (const kb of scopes) {
        for (const e of (await store.repositories.graphReads.exportGraph(kb)).entities) {
          for (const term of entityNameTerms(e.normalizedName)) expected.push({ tenantId: kb.tenantId, kbId: kb.kbId, entityId: e.id, term });
        }
      }
      expect(sortTerms(await readTerms(store))).toEqual(sortTerms(expected));
    }

    const meta = (): GraphEditMeta => ({ id: `edit-${++edits}`, actor: 'alice', at: new Date(Date.UTC(2026, 0, 1, 0, 0, edits)).toISOString() });
    const mention = (kb: KbScope, display: string): EntityMentionWrite => {
      const normalizedName = display.toLowerCase();
      return { entityId: stableId('ent', kb.kbId, normalizedName), name: display, normalizedName, type: 'person', description: display, embedding: vectorFor(display.length) };
    };
    const found = async (query: string, kb = scope) => {
      await expectTermsInStep();
      const entities = await store.repositories.graphReads.searchEntitiesByName(kb, query, 10);
      // The names-and-counts search finds the same entities, in the same order.
      const nodes = await store.repositories.graphReads.searchEntityNodesByName(kb, query, 10);
      expect(nodes).toEqual(entities.map((e) => ({ id: e.id, name: e.name, normalizedName: e.normalizedName, mentionCount: e.mentionCount })));
      return entities.map((e) => e.name);
    };

    /** One document, one chunk per text, each naming the entities listed for it. */
    async function index(kb: KbScope, documentId: string, named: Record<string, string[]>): Promise<void> {
      await saveTestDocument(store, kb, documentId);
      const texts = Object.keys(named);
      await store.repositories.chunks.upsertChunks(kb, texts.map((text, i) => chunk(documentId, 1, i, text, i + 1)));
      for (const [i, text] of texts.entries()) {
        await store.repositories.graphWrites.applyChunkExtraction(kb, stableId('chk', documentId, 1, i), named[text]!.map((n) => mention(kb, n)), []);
      }
    }

    const curieAndFriends = (kb = scope) => index(kb, 'd1', { 'Marie Curie found polonium': ['Marie Curie', 'Polonium'], 'Pierre Curie and radium': ['Pierre Curie', 'Radium'] });

    it('finds entities by whole words, the names with most of them first', async () => {
      await curieAndFriends();
      expect(await found('polonium')).toEqual(['Polonium']);
      expect((await found('who was curie?')).sort()).toEqual(['Marie Curie', 'Pierre Curie']);
      expect((await found('Marie Curie and polonium'))[0]).toBe('Marie Curie');
      expect(await found('the of')).toEqual([]);
    });

    it("finds entities by the start of a word from the query's last word of three letters or more, not by the inside of one", async () => {
      await curieAndFriends();
      expect((await found('cur')).sort()).toEqual(['Marie Curie', 'Pierre Curie']);
      expect(await found('pier')).toEqual(['Pierre Curie']);
      // Whole-word hits come before word starts.
      expect((await found('radium pol'))).toEqual(['Radium', 'Polonium']);
      expect(await found('marie pier')).toEqual(['Marie Curie', 'Pierre Curie']);
      expect(await found('pol radium')).toEqual(['Radium']);
      expect(await found('po')).toEqual([]);
      expect(await found('urie')).toEqual([]);
    });

    it('follows renames, merges and deletions, and their undo', async () => {
      await curieAndFriends();
      const pierre = mention(scope, 'Pierre Curie').entityId;
      const marie = mention(scope, 'Marie Curie').entityId;
      const rename = meta();
      await store.repositories.graphEdits.updateEntity(scope, pierre, { name: 'Pierre Skłodowski', normalizedName: 'pierre sklodowski' }, rename);
      expect(await found('sklodowski')).toEqual(['Pierre Skłodowski']);
      expect(await found('curie')).toEqual(['Marie Curie']);

      const merge = meta();
      await store.repositories.graphEdits.mergeEntities(scope, pierre, marie, merge);
      expect(await found('sklodowski')).toEqual([]);
      await store.repositories.graphEdits.undoGraphEdit(scope, merge.id, meta());
      expect(await found('sklodowski')).toEqual(['Pierre Skłodowski']);

      const deletion = meta();
      await store.repositories.graphEdits.deleteEntity(scope, mention(scope, 'Radium').entityId, deletion);
      expect(await found('radium')).toEqual([]);
      await store.repositories.graphEdits.undoGraphEdit(scope, deletion.id, meta());
      expect(await found('radium')).toEqual(['Radium']);

      await store.repositories.graphEdits.undoGraphEdit(scope, rename.id, meta());
      expect(await found('sklodowski')).toEqual([]);
      expect((await found('curie')).sort()).toEqual(['Marie Curie', 'Pierre Curie']);
    });

    it('finds manual entities, and loses entities whose last mention goes with their document', async () => {
      await curieAndFriends();
      await store.repositories.graphEdits.createManualEntity(scope, { id: 'ent_manual', name: 'Radium Institute', normalizedName: 'radium institute', type: 'org', description: '', embedding: vectorFor(3) }, [], meta());
      expect(await found('institute')).toEqual(['Radium Institute']);
      await store.repositories.graphEdits.updateEntity(scope, 'ent_manual', { name: 'Curie Institute', normalizedName: 'curie institute' }, meta());
      expect(await found('radium')).toEqual(['Radium']);
      await store.repositories.documents.deleteDocument(scope, 'd1');
      expect(await found('curie')).toEqual(['Curie Institute']);
      expect(await found('radium')).toEqual([]);
    });

    it("keeps knowledge bases and tenants apart, and leaves no words of a deleted knowledge base's entities", async () => {
      const other: KbScope = { tenantId: 't2', kbId: (await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't2' }, { name: 'kb', description: '', settings: TEST_KB_SETTINGS })).id };
      await curieAndFriends();
      scopes.push(other);
      await index(other, 'd9', { 'Radium glows': ['Radium'] });
      expect(await found('curie', other)).toEqual([]);
      expect(await found('radium', other)).toEqual(['Radium']);

      await store.repositories.knowledgeBases.deleteKnowledgeBase(scope);
      scopes.shift();
      expect((await readTerms(store)).filter((t) => t.kbId === scope.kbId)).toEqual([]);
      expect(await found('radium', other)).toEqual(['Radium']);
    });
  });
}

/**
 * A database migrated before entity names had words (migration 21) gets the words of its
 * entities when migrated: `rewind` takes the store back to before 21 (the table and its record
 * gone) and resolves to the store migrated again.
 */
export function describeEntityNameBackfill(name: string, makeStore: () => Promise<TrellisStore>, rewind: (store: TrellisStore) => Promise<TrellisStore>): void {
  describe(`${name}: entity name words of a database from before them`, () => {
    it('finds the entities written before, by whole word and word start, in their own knowledge base only', async () => {
      let store = await makeStore();
      try {
        const scopes: KbScope[] = [];
        for (const tenantId of ['t1', 't2']) {
          const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId }, { name: 'kb', description: '', settings: TEST_KB_SETTINGS });
          const scope = { tenantId, kbId: kb.id };
          scopes.push(scope);
          // Ids are unique across tenants on SQLite.
          const documentId = `d-${tenantId}`;
          await saveTestDocument(store, scope, documentId);
          await store.repositories.chunks.upsertChunks(scope, [chunk(documentId, 1, 0, `notes of ${tenantId}`, 1)]);
          const names = tenantId === 't1' ? ['Marie Curie', 'Polonium'] : ['Ernest Rutherford'];
          await store.repositories.graphWrites.applyChunkExtraction(
            scope,
            stableId('chk', documentId, 1, 0),
            names.map((n) => ({ entityId: stableId('ent', kb.id, n.toLowerCase()), name: n, normalizedName: n.toLowerCase(), type: 'x', description: '', embedding: vectorFor(n.length) })),
            [],
          );
        }
        store = await rewind(store);
        const found = async (scope: KbScope, query: string) => (await store.repositories.graphReads.searchEntitiesByName(scope, query, 10)).map((e) => e.name);
        expect(await found(scopes[0]!, 'curie')).toEqual(['Marie Curie']);
        expect(await found(scopes[0]!, 'polo')).toEqual(['Polonium']);
        expect(await found(scopes[0]!, 'rutherford')).toEqual([]);
        expect(await found(scopes[1]!, 'rutherford')).toEqual(['Ernest Rutherford']);
      } finally {
        await store.close();
      }
    });
  });
}
