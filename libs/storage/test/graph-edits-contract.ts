import { describe, expect, it } from 'vitest';
import { ErrorCode, stableId } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import type { EntityMentionWrite, GraphEditMeta, RelationshipMentionWrite } from '@trellis/graph';
import type { NewChunk, RelationshipRecord } from '../src/records';
import type { TrellisStore } from '../src/trellis-store';
import { eachStoreWithKnowledgeBase, vectorFor } from './store-contract';

/**
 * Manual graph edits, for every TrellisStore adapter: edits are overlays that survive the
 * re-derivation of the graph from mentions, and a merge can be undone exactly.
 */
export function describeGraphEditContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: graph edits`, () => {
    let store: TrellisStore;
    let scope: KbScope;
    let editCount = 0;

    eachStoreWithKnowledgeBase(makeStore, (s, k) => {
      store = s;
      scope = k;
    });

    function meta(actor = 'alice'): GraphEditMeta {
      editCount += 1;
      return { id: `edit-${String(editCount).padStart(6, '0')}`, actor, at: new Date(Date.UTC(2026, 0, 1, 0, 0, editCount)).toISOString() };
    }

    function entity(name: string, description: string): EntityMentionWrite {
      const normalizedName = name.toLowerCase();
      return { entityId: stableId('ent', scope.kbId, normalizedName), name, normalizedName, type: 'person', description, embedding: vectorFor(name.length) };
    }

    function relationship(source: EntityMentionWrite, target: EntityMentionWrite, label: string, description: string, strength = 5): RelationshipMentionWrite {
      return {
        relationshipId: stableId('rel', scope.kbId, source.normalizedName, label, target.normalizedName),
        sourceId: source.entityId,
        targetId: target.entityId,
        label,
        description,
        strength,
        embedding: vectorFor(label.length + source.name.length),
      };
    }

    /**
     * The relationships of these entities, read three ways that must agree after every edit:
     * whole rows, edges from the endpoint indexes alone, and rows by id.
     */
    async function relationshipsOf(entityIds: readonly string[]): Promise<RelationshipRecord[]> {
      const reads = store.repositories.graphReads;
      const rows = await reads.relationshipsOfEntities(scope, entityIds);
      expect(await reads.relationshipEdgesOfEntities(scope, entityIds)).toEqual(rows.map(({ id, sourceId, targetId, weight }) => ({ id, sourceId, targetId, weight })));
      expect(await reads.getRelationships(scope, rows.map((r) => r.id).reverse())).toEqual([...rows].reverse());
      return rows;
    }

    async function addChunks(documentId: string, texts: string[], version = 1): Promise<string[]> {
      await store.repositories.documents.saveDocumentVersion(scope, {
        id: documentId,
        sourceUri: `${documentId}.txt`,
        filename: `${documentId}.txt`,
        mimeType: 'text/plain',
        contentHash: `${documentId}-${version}`,
        version,
        sizeBytes: 10,
        metadata: {},
        text: texts.join('\n'),
      });
      const chunks: NewChunk[] = texts.map((text, ordinal) => ({
        id: stableId('chk', documentId, version, ordinal),
        documentId,
        version,
        ordinal,
        text,
        heading: '',
        tokenCount: 3,
        contentHash: stableId('h', text),
        embedding: vectorFor(ordinal + 1),
      }));
      await store.repositories.chunks.upsertChunks(scope, chunks);
      return chunks.map((c) => c.id);
    }

    /** Everything a merge may change, ids included, in a comparable order. */
    async function graphState() {
      const graph = await store.repositories.graphReads.exportGraph(scope);
      const entityChunks = await store.repositories.graphReads.chunkIdsForEntities(scope, graph.entities.map((e) => e.id));
      const relationshipChunks = await store.repositories.graphReads.chunkIdsForRelationships(scope, graph.relationships.map((r) => r.id));
      return {
        entities: graph.entities.map((e) => ({ ...e, chunks: entityChunks.get(e.id) ?? [] })).sort((a, b) => a.id.localeCompare(b.id)),
        relationships: graph.relationships.map((r) => ({ ...r, chunks: relationshipChunks.get(r.id) ?? [] })).sort((a, b) => a.id.localeCompare(b.id)),
      };
    }

    const curie = () => entity('Marie Curie', 'A physicist.');
    const mCurie = () => entity('M. Curie', 'Discovered radium.');
    const polonium = () => entity('Polonium', 'An element.');
    const radium = () => entity('Radium', 'Another element.');

    /** Three chunks: Curie in one, "M. Curie" in one, both in the third. */
    async function indexCurie(documentId = 'd1', version = 1): Promise<string[]> {
      const [c1, c2, c3] = await addChunks(documentId, ['Marie Curie found polonium', 'M. Curie found radium', 'Marie Curie, or M. Curie'], version);
      await store.repositories.graphWrites.applyChunkExtraction(scope, c1!, [curie(), polonium()], [relationship(curie(), polonium(), 'discovered', 'Curie found polonium.')]);
      await store.repositories.graphWrites.applyChunkExtraction(scope, c2!, [mCurie(), radium()], [relationship(mCurie(), radium(), 'discovered', 'She found radium.')]);
      await store.repositories.graphWrites.applyChunkExtraction(scope, c3!, [mCurie(), curie(), polonium()], [relationship(mCurie(), polonium(), 'discovered', 'Polonium again.', 3)]);
      return [c1!, c2!, c3!];
    }

    it('reads at most n edges per entity and end, the heaviest, and an edge of a hub still through its other end; a chunk\'s mentions of some entities', async () => {
      const [c1] = await addChunks('hub', ['The hub and its neighbours']);
      const hub = entity('Hub', '');
      const others = [1, 2, 3, 4, 5, 6, 7].map((i) => entity(`Neighbour ${i}`, ''));
      const out = others.slice(0, 5).map((other, i) => relationship(hub, other, 'links', '', i + 1));
      const into = [relationship(others[5]!, hub, 'points at', '', 9), relationship(others[6]!, hub, 'points at', '', 2)];
      await store.repositories.graphWrites.applyChunkExtraction(scope, c1!, [hub, ...others], [...out, ...into]);
      const reads = store.repositories.graphReads;
      const ids = (edges: ReadonlyArray<{ id: string }>) => edges.map((e) => e.id);
      const inIdOrder = (list: ReadonlyArray<{ relationshipId: string }>) => list.map((r) => r.relationshipId).sort();
      expect(ids(await reads.relationshipEdgesOfEntities(scope, [hub.entityId]))).toEqual(inIdOrder([...out, ...into]));
      // Strengths 5 and 4 out of the hub, 9 and 2 into it.
      expect(ids(await reads.relationshipEdgesOfEntities(scope, [hub.entityId], 2))).toEqual(inIdOrder([out[4]!, out[3]!, ...into]));
      expect(ids(await reads.relationshipEdgesOfEntities(scope, [hub.entityId, others[0]!.entityId], 2))).toEqual(inIdOrder([out[4]!, out[3]!, out[0]!, ...into]));
      // The chunk's mentions, of all its entities or of some.
      expect((await reads.entityIdsForChunks(scope, [c1!])).get(c1!)).toEqual([hub, ...others].map((e) => e.entityId).sort());
      expect(await reads.entityIdsForChunks(scope, [c1!], [others[2]!.entityId, hub.entityId, 'ent_absent'])).toEqual(new Map([[c1!, [hub.entityId, others[2]!.entityId].sort()]]));
      expect(await reads.entityIdsForChunks(scope, [c1!], [])).toEqual(new Map());
      const edges = await reads.relationshipEdgesOfEntities(scope, [hub.entityId], 1);
      expect(edges.map((e) => [e.id, e.weight])).toEqual(
        [
          [out[4]!.relationshipId, 5],
          [into[0]!.relationshipId, 9],
        ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
      );
    });

    it('merges an entity into another: mentions, relationships (duplicates combined) and provenance move', async () => {
      const [c1, c2, c3] = await indexCurie();
      const target = await store.repositories.graphEdits.mergeEntities(scope, mCurie().entityId, curie().entityId, meta());
      expect(target).toMatchObject({ id: curie().entityId, name: 'Marie Curie', mentionCount: 3 });
      expect(await store.repositories.graphReads.getEntities(scope, [mCurie().entityId])).toEqual([]);
      expect(await store.repositories.graphReads.getEntityNodes(scope, [mCurie().entityId, curie().entityId])).toEqual([{ id: curie().entityId, name: 'Marie Curie', normalizedName: 'marie curie', mentionCount: 3 }]);
      expect((await store.repositories.graphReads.chunkIdsForEntities(scope, [curie().entityId])).get(curie().entityId)).toEqual([c1, c2, c3].sort());
      const ofChunks = await store.repositories.graphReads.entityIdsForChunks(scope, [c1!, c3!]);
      expect(ofChunks.get(c3!)).toEqual([curie().entityId, polonium().entityId].sort());
      expect(ofChunks.get(c1!)).toContain(curie().entityId);
      expect(ofChunks.get(c1!)).not.toContain(mCurie().entityId);
      const relationships = await relationshipsOf([curie().entityId]);
      expect(relationships.map((r) => `${r.sourceName} ${r.label} ${r.targetName}`).sort()).toEqual(['Marie Curie discovered Polonium', 'Marie Curie discovered Radium']);
      const toPolonium = relationships.find((r) => r.targetId === polonium().entityId)!;
      expect(toPolonium).toMatchObject({ id: relationship(curie(), polonium(), 'discovered', '').relationshipId, mentionCount: 2, weight: 8 });
      expect((await store.repositories.graphReads.chunkIdsForRelationships(scope, [toPolonium.id])).get(toPolonium.id)).toEqual([c1, c3].sort());

      // A later mention of the merged entity (a new chunk) lands on the target.
      const [c4] = await addChunks('d2', ['M. Curie taught']);
      await store.repositories.graphWrites.applyChunkExtraction(scope, c4!, [mCurie()], []);
      expect(await store.repositories.graphReads.getEntities(scope, [mCurie().entityId])).toEqual([]);
      expect((await store.repositories.graphReads.getEntities(scope, [curie().entityId]))[0]).toMatchObject({ name: 'Marie Curie', mentionCount: 4 });
    });

    it('merge then undo restores both entities exactly', async () => {
      await indexCurie();
      const before = await graphState();
      const merge = meta('bob');
      await store.repositories.graphEdits.mergeEntities(scope, mCurie().entityId, curie().entityId, merge);
      expect(await graphState()).not.toEqual(before);
      const undone = await store.repositories.graphEdits.undoGraphEdit(scope, merge.id, meta('carol'));
      expect(undone).toMatchObject({ id: merge.id, action: 'merge-entities', undoneBy: 'carol' });
      expect(await graphState()).toEqual(before);
      await expect(store.repositories.graphEdits.undoGraphEdit(scope, merge.id, meta())).rejects.toMatchObject({ code: ErrorCode.FailedPrecondition });
    });

    it('undo gives back to the merged entity what was indexed while the merge was active', async () => {
      await indexCurie();
      const merge = meta();
      await store.repositories.graphEdits.mergeEntities(scope, mCurie().entityId, curie().entityId, merge);
      const [c4] = await addChunks('d2', ['M. Curie taught in Paris']);
      const paris = entity('Paris', 'A city.');
      await store.repositories.graphWrites.applyChunkExtraction(scope, c4!, [mCurie(), paris], [relationship(mCurie(), paris, 'taught in', 'She taught in Paris.')]);
      await store.repositories.graphEdits.undoGraphEdit(scope, merge.id, meta());
      const [restored] = await store.repositories.graphReads.getEntities(scope, [mCurie().entityId]);
      expect(restored).toMatchObject({ name: 'M. Curie', mentionCount: 3 });
      expect((await store.repositories.graphReads.getEntities(scope, [curie().entityId]))[0]).toMatchObject({ mentionCount: 2 });
      const taught = (await relationshipsOf([paris.entityId]))[0]!;
      expect(taught).toMatchObject({ sourceId: mCurie().entityId, sourceName: 'M. Curie', label: 'taught in' });
    });

    it('a merge holds when the same text is indexed again', async () => {
      const [c1, c2, c3] = await indexCurie();
      await store.repositories.graphEdits.mergeEntities(scope, mCurie().entityId, curie().entityId, meta());
      const merged = await graphState();
      await store.repositories.graphWrites.applyChunkExtraction(scope, c2!, [mCurie(), radium()], [relationship(mCurie(), radium(), 'discovered', 'She found radium.')]);
      await store.repositories.graphWrites.applyChunkExtraction(scope, c3!, [mCurie(), curie(), polonium()], [relationship(mCurie(), polonium(), 'discovered', 'Polonium again.', 3)]);
      await store.repositories.graphWrites.applyChunkExtraction(scope, c1!, [curie(), polonium()], [relationship(curie(), polonium(), 'discovered', 'Curie found polonium.')]);
      expect(await graphState()).toEqual(merged);
    });

    it('a merge racing with chunk writes that mention the merged entity leaves it merged', async () => {
      await indexCurie();
      const texts = Array.from({ length: 12 }, (_, i) => `M. Curie lecture ${i}`);
      const chunkIds = await addChunks('d3', texts);
      await Promise.all([
        store.repositories.graphEdits.mergeEntities(scope, mCurie().entityId, curie().entityId, meta()),
        ...chunkIds.map((id) => store.repositories.graphWrites.applyChunkExtraction(scope, id, [mCurie(), radium()], [relationship(mCurie(), radium(), 'lectured on', 'Lecture.')])),
      ]);
      expect(await store.repositories.graphReads.getEntities(scope, [mCurie().entityId])).toEqual([]);
      expect((await store.repositories.graphReads.getEntities(scope, [curie().entityId]))[0]!.mentionCount).toBe(3 + chunkIds.length);
      expect((await relationshipsOf([radium().entityId])).every((r) => r.sourceId === curie().entityId)).toBe(true);
    });

    it('undoing a deletion while chunks mentioning the entity are written gives it every mention', async () => {
      await indexCurie();
      const deletion = meta();
      await store.repositories.graphEdits.deleteEntity(scope, radium().entityId, deletion);
      const chunkIds = await addChunks('d3', Array.from({ length: 12 }, (_, i) => `Radium note ${i}`));
      await Promise.all([
        store.repositories.graphEdits.undoGraphEdit(scope, deletion.id, meta()),
        ...chunkIds.map((id) => store.repositories.graphWrites.applyChunkExtraction(scope, id, [radium()], [])),
      ]);
      expect((await store.repositories.graphReads.getEntities(scope, [radium().entityId]))[0]?.mentionCount).toBe(1 + chunkIds.length);
    });

    it('refuses to merge an entity into itself, an unknown one, or one merged away', async () => {
      await indexCurie();
      await expect(store.repositories.graphEdits.mergeEntities(scope, curie().entityId, curie().entityId, meta())).rejects.toMatchObject({ code: ErrorCode.FailedPrecondition });
      await expect(store.repositories.graphEdits.mergeEntities(scope, 'ent_nope', curie().entityId, meta())).rejects.toMatchObject({ code: ErrorCode.NotFound });
      await store.repositories.graphEdits.mergeEntities(scope, mCurie().entityId, curie().entityId, meta());
      await expect(store.repositories.graphEdits.mergeEntities(scope, mCurie().entityId, radium().entityId, meta())).rejects.toMatchObject({ code: ErrorCode.FailedPrecondition });
      await expect(store.repositories.graphEdits.mergeEntities(scope, radium().entityId, mCurie().entityId, meta())).rejects.toMatchObject({ code: ErrorCode.FailedPrecondition });
      await expect(store.repositories.graphEdits.undoGraphEdit(scope, 'edit-unknown', meta())).rejects.toMatchObject({ code: ErrorCode.NotFound });
    });

    it('undoes merges in reverse order only', async () => {
      await indexCurie();
      const first = meta();
      await store.repositories.graphEdits.mergeEntities(scope, mCurie().entityId, curie().entityId, first);
      const second = meta();
      await store.repositories.graphEdits.mergeEntities(scope, curie().entityId, radium().entityId, second);
      await expect(store.repositories.graphEdits.undoGraphEdit(scope, first.id, meta())).rejects.toMatchObject({ code: ErrorCode.FailedPrecondition });
      await store.repositories.graphEdits.undoGraphEdit(scope, second.id, meta());
      await store.repositories.graphEdits.undoGraphEdit(scope, first.id, meta());
      expect((await store.repositories.graphReads.getEntities(scope, [mCurie().entityId, curie().entityId, radium().entityId])).map((e) => e.mentionCount)).toEqual([2, 2, 1]);
      // What a walk reads of the same entities: in the order asked, an unknown id skipped, names and counts only.
      const asked = [radium().entityId, 'ent_absent', mCurie().entityId, curie().entityId];
      const whole = await store.repositories.graphReads.getEntities(scope, asked);
      expect(whole.map((e) => e.id)).toEqual([radium().entityId, mCurie().entityId, curie().entityId]);
      expect(await store.repositories.graphReads.getEntityNodes(scope, asked)).toEqual(whole.map(({ id, name, normalizedName, mentionCount }) => ({ id, name, normalizedName, mentionCount })));
    });

    it('deleted entities and relationships stay deleted when the same chunk is extracted again, and come back on undo', async () => {
      const [c1] = await indexCurie();
      const before = await graphState();
      const discovered = relationship(curie(), polonium(), 'discovered', 'Curie found polonium.');
      const deleteRelationship = meta();
      await store.repositories.graphEdits.deleteRelationship(scope, discovered.relationshipId, deleteRelationship);
      const deleteEntity = meta();
      await store.repositories.graphEdits.deleteEntity(scope, radium().entityId, deleteEntity);
      await store.repositories.graphWrites.applyChunkExtraction(scope, c1!, [curie(), polonium()], [discovered]);
      const [c2] = await store.repositories.chunks.listChunks(scope, 'd1', 1).then((chunks) => chunks.filter((c) => c.ordinal === 1).map((c) => c.id));
      await store.repositories.graphWrites.applyChunkExtraction(scope, c2!, [mCurie(), radium()], [relationship(mCurie(), radium(), 'discovered', 'She found radium.')]);
      expect(await store.repositories.graphReads.getEntities(scope, [radium().entityId])).toEqual([]);
      expect((await relationshipsOf([curie().entityId])).map((r) => r.id)).not.toContain(discovered.relationshipId);
      expect((await relationshipsOf([mCurie().entityId])).map((r) => r.targetId)).toEqual([polonium().entityId]);
      await expect(store.repositories.graphEdits.deleteEntity(scope, radium().entityId, meta())).rejects.toMatchObject({ code: ErrorCode.NotFound });

      await store.repositories.graphEdits.undoGraphEdit(scope, deleteEntity.id, meta());
      await store.repositories.graphEdits.undoGraphEdit(scope, deleteRelationship.id, meta());
      expect(await graphState()).toEqual(before);
    });

    it('overrides survive recomputation; a negative weight stays visible but leaves relationship search', async () => {
      const [c1] = await indexCurie();
      const discovered = relationship(curie(), polonium(), 'discovered', 'Curie found polonium.');
      const renamed = await store.repositories.graphEdits.updateEntity(scope, curie().entityId, { name: 'Maria Skłodowska-Curie', normalizedName: 'maria sklodowska-curie', description: 'Physicist and chemist.' }, meta());
      expect(renamed).toMatchObject({ name: 'Maria Skłodowska-Curie', description: 'Physicist and chemist.' });
      const weighted = await store.repositories.graphEdits.updateRelationship(scope, discovered.relationshipId, { weight: -1 }, meta());
      expect(weighted.weight).toBe(-1);
      await store.repositories.graphWrites.applyChunkExtraction(scope, c1!, [curie(), polonium()], [discovered]);
      expect((await store.repositories.graphReads.getEntities(scope, [curie().entityId]))[0]).toMatchObject({ name: 'Maria Skłodowska-Curie', description: 'Physicist and chemist.', mentionCount: 2 });
      expect((await store.repositories.graphReads.searchEntitiesByName(scope, 'sklodowska', 5)).map((e) => e.id)).toEqual([curie().entityId]);
      const exported = (await store.repositories.graphReads.exportGraph(scope)).relationships.find((r) => r.id === discovered.relationshipId);
      expect(exported).toMatchObject({ weight: -1, sourceName: 'Maria Skłodowska-Curie' });
      const found = await store.repositories.graphReads.searchRelationshipsByVector(scope, discovered.embedding, 10);
      expect(found.length).toBeGreaterThan(0);
      expect(found.map((f) => f.relationship.id)).not.toContain(discovered.relationshipId);
    });

    it('a relationship weighted negative after it was searched leaves relationship search, and comes back when weighted again', async () => {
      await indexCurie();
      const discovered = relationship(curie(), polonium(), 'discovered', 'Curie found polonium.');
      const search = async () => (await store.repositories.graphReads.searchRelationshipsByVector(scope, discovered.embedding, 10)).map((f) => f.relationship.id);
      const similarity = async () => (await store.repositories.graphReads.relationshipSimilarities(scope, discovered.embedding, [discovered.relationshipId])).get(discovered.relationshipId);
      expect(await search()).toContain(discovered.relationshipId);
      await store.repositories.graphEdits.updateRelationship(scope, discovered.relationshipId, { weight: -1 }, meta());
      expect(await search()).not.toContain(discovered.relationshipId);
      // Still scored where a walk asks for it by id: it is kept out of search only.
      expect(await similarity()).toBeCloseTo(1, 2);
      await store.repositories.graphEdits.updateRelationship(scope, discovered.relationshipId, { weight: 2 }, meta());
      expect(await search()).toContain(discovered.relationshipId);
    });

    it('a description set by hand wins over the summary the graph writer saves after new mentions', async () => {
      const [, c2] = await indexCurie();
      await store.repositories.graphEdits.updateEntity(scope, curie().entityId, { description: 'Physicist and chemist.' }, meta());
      await store.repositories.graphWrites.applyChunkExtraction(scope, c2!, [mCurie(), radium(), curie()], []);
      const pending = (await store.repositories.graphSummaries.listPendingSummaries(scope, 100)).find((p) => p.id === curie().entityId);
      expect(pending?.descriptions).toEqual(['A physicist.']);
      const saved = await store.repositories.graphSummaries.saveSummaries(scope, [{ kind: 'entity', id: curie().entityId, summaryHash: pending!.summaryHash, description: 'A derived summary.', embedding: vectorFor(7) }]);
      expect(saved).toBe(1);
      expect((await store.repositories.graphReads.getEntities(scope, [curie().entityId]))[0]).toMatchObject({ description: 'Physicist and chemist.', mentionCount: 3 });
    });

    it('a synopsis entity links a group, survives re-indexing, and can be deleted', async () => {
      await indexCurie();
      const synopsisId = stableId('syn', scope.kbId, 'curie family');
      const links = [curie(), polonium()].map((member) => ({
        id: stableId('rel', synopsisId, member.entityId),
        sourceId: synopsisId,
        targetId: member.entityId,
        label: 'summarizes',
        description: '',
        weight: 1,
        embedding: vectorFor(7),
      }));
      const created = await store.repositories.graphEdits.createManualEntity(
        scope,
        { id: synopsisId, name: 'Curie discoveries', normalizedName: 'curie discoveries', type: 'synopsis', description: 'What the Curies found.', embedding: vectorFor(9) },
        links,
        meta(),
      );
      expect(created).toMatchObject({ name: 'Curie discoveries', type: 'synopsis', mentionCount: 0 });
      // Re-index: version 2 of the document is written, then version 1 removed.
      await indexCurie('d1', 2);
      await store.repositories.documents.deleteStaleVersions(scope, 'd1', 2);
      expect((await store.repositories.graphReads.getEntities(scope, [synopsisId]))[0]).toMatchObject({ description: 'What the Curies found.' });
      expect((await relationshipsOf([synopsisId])).map((r) => r.targetId).sort()).toEqual([curie().entityId, polonium().entityId].sort());
      await store.repositories.graphEdits.deleteEntity(scope, synopsisId, meta());
      expect(await store.repositories.graphReads.getEntities(scope, [synopsisId])).toEqual([]);
      expect((await relationshipsOf([curie().entityId])).some((r) => r.sourceId === synopsisId)).toBe(false);
    });

    it('undoing updates of an entity and a relationship gives back what they were', async () => {
      await indexCurie();
      const before = await graphState();
      const discovered = relationship(curie(), polonium(), 'discovered', '');
      const renamed = meta();
      await store.repositories.graphEdits.updateEntity(scope, curie().entityId, { name: 'Maria Curie', normalizedName: 'maria curie', type: 'chemist', description: 'Chemist.' }, renamed);
      const reweighted = meta();
      await store.repositories.graphEdits.updateRelationship(scope, discovered.relationshipId, { label: 'isolated', description: 'By hand.', weight: 1 }, reweighted);
      expect(await graphState()).not.toEqual(before);
      await store.repositories.graphEdits.undoGraphEdit(scope, reweighted.id, meta());
      await store.repositories.graphEdits.undoGraphEdit(scope, renamed.id, meta());
      expect(await graphState()).toEqual(before);
    });

    it('merging an entity a synopsis links moves the link to the target', async () => {
      await indexCurie();
      const synopsisId = stableId('syn', scope.kbId, 'found');
      const links = [mCurie(), polonium()].map((member) => ({
        id: stableId('rel', synopsisId, member.entityId), sourceId: synopsisId, targetId: member.entityId, label: 'summarizes', description: '', weight: 1, embedding: vectorFor(3),
      }));
      await store.repositories.graphEdits.createManualEntity(
        scope,
        { id: synopsisId, name: 'Findings', normalizedName: 'findings', type: 'synopsis', description: 'What was found.', embedding: vectorFor(4) },
        links,
        meta(),
      );
      await store.repositories.graphEdits.mergeEntities(scope, mCurie().entityId, curie().entityId, meta());
      expect((await relationshipsOf([synopsisId])).map((r) => r.targetId).sort()).toEqual([curie().entityId, polonium().entityId].sort());
    });

    it('logs every edit with who and when, newest first', async () => {
      await indexCurie();
      const update = meta('alice');
      await store.repositories.graphEdits.updateEntity(scope, radium().entityId, { type: 'element' }, update);
      const merge = meta('bob');
      await store.repositories.graphEdits.mergeEntities(scope, mCurie().entityId, curie().entityId, merge);
      const undo = meta('carol');
      await store.repositories.graphEdits.undoGraphEdit(scope, merge.id, undo);
      const log = await store.repositories.graphEdits.listGraphEdits(scope, 10);
      expect(log.map((e) => [e.id, e.action, e.actor, e.undoneBy])).toEqual([
        [merge.id, 'merge-entities', 'bob', 'carol'],
        [update.id, 'update-entity', 'alice', null],
      ]);
      expect(log[0]).toMatchObject({ targetIds: [mCurie().entityId, curie().entityId], createdAt: merge.at, undoneAt: undo.at });
      expect(JSON.parse(log[1]!.before)).toMatchObject({ type: 'person' });
      expect(JSON.parse(log[1]!.after)).toMatchObject({ type: 'element' });
      expect(await store.repositories.graphEdits.getGraphEdit(scope, merge.id)).toEqual(log[0]);
      expect(await store.repositories.graphEdits.getGraphEdit(scope, 'edit-unknown')).toBeNull();
    });
  });
}
