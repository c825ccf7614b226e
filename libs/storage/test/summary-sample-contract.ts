import { describe, expect, it } from 'vitest';
import { stableId } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import { MAX_SUMMARY_MENTIONS } from '@trellis/graph';
import type { EntityMentionWrite, RelationshipMentionWrite } from '@trellis/graph';
import type { TrellisStore } from '../src/trellis-store';
import { eachStoreWithKnowledgeBase, saveTestDocument, vectorFor } from './store-contract';

const MENTIONS = MAX_SUMMARY_MENTIONS + 10;

const chunkId = (i: number) => `chk_${String(i).padStart(4, '0')}`;
const description = (i: number) => `Fact ${String(i).padStart(4, '0')}.`;

function hub(scope: KbScope, i: number, needsReview: boolean): EntityMentionWrite {
  return { entityId: stableId('ent', scope.kbId, 'hub'), name: 'Hub', normalizedName: 'hub', type: 'concept', description: description(i), needsReview, embedding: vectorFor(1) };
}

function uses(scope: KbScope, i: number): RelationshipMentionWrite {
  const sourceId = stableId('ent', scope.kbId, 'hub');
  const targetId = stableId('ent', scope.kbId, 'other');
  return { relationshipId: stableId('rel', sourceId, 'uses', targetId), sourceId, targetId, label: 'uses', description: description(i), strength: 2, embedding: vectorFor(2) };
}

/**
 * A hub's row from its first mentions (@trellis/graph's MAX_SUMMARY_MENTIONS), for every
 * TrellisStore adapter: its summary and summary hash from the first in chunk order, its counts,
 * weight and review flag from all of them, and a mention past them leaves its summary as it was
 * (nothing to summarise or embed again).
 */
export function describeSummarySampleContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: summaries from a sample of a hub's mentions`, () => {
    let store: TrellisStore;
    let scope: KbScope;
    eachStoreWithKnowledgeBase(makeStore, (s, k) => {
      store = s;
      scope = k;
    });

    async function mention(i: number, needsReview = false): Promise<void> {
      const other: EntityMentionWrite = { entityId: stableId('ent', scope.kbId, 'other'), name: 'Other', normalizedName: 'other', type: 'concept', description: 'The other end.', embedding: vectorFor(4) };
      await store.repositories.graphWrites.applyChunkExtraction(scope, chunkId(i), [hub(scope, i, needsReview), other], [uses(scope, i)]);
    }

    const pending = () => store.repositories.graphSummaries.listPendingSummaries(scope, 100);

    it('derives the summary from the first mentions in chunk order, and counts, weight and review flag from all', async () => {
      await saveTestDocument(store, scope, 'd1');
      const chunks = Array.from({ length: MENTIONS + 2 }, (_, i) => ({
        id: chunkId(i),
        documentId: 'd1',
        version: 1,
        ordinal: i,
        text: `chunk ${i}`,
        heading: '',
        tokenCount: 2,
        contentHash: `h${i}`,
        embedding: vectorFor(i + 3),
      }));
      await store.repositories.chunks.upsertChunks(scope, chunks);
      // Every other chunk first, so that the first mentions are the chunks' first, not the first written.
      for (let i = 1; i < MENTIONS; i += 2) await mention(i, true);
      for (let i = 2; i < MENTIONS; i += 2) await mention(i, true);
      const hubId = stableId('ent', scope.kbId, 'hub');
      const hubRow = async () => (await store.repositories.graphReads.getEntities(scope, [hubId]))[0];
      expect(await hubRow()).toMatchObject({ mentionCount: MENTIONS - 1, needsReview: true });
      // Past the first mentions, a mention that describes the hub clears its flag.
      await mention(MENTIONS);
      expect(await hubRow()).toMatchObject({ mentionCount: MENTIONS, needsReview: false });
      const first = Array.from({ length: MAX_SUMMARY_MENTIONS }, (_, i) => description(i + 1));
      expect((await pending()).find((p) => p.id === hubId)?.descriptions).toEqual(first);
      const relationship = (await store.repositories.graphReads.exportGraph(scope)).relationships[0]!;
      expect(relationship).toMatchObject({ mentionCount: MENTIONS, weight: 2 * MENTIONS });
      expect((await pending()).find((p) => p.kind === 'relationship')?.descriptions).toEqual(first);

      await store.repositories.graphSummaries.saveSummaries(scope, (await pending()).map((p) => ({ ...p, description: p.descriptions[0]!, embedding: vectorFor(7) })));
      expect(await pending()).toEqual([]);
      // Past the first mentions: counted, and nothing to summarise again.
      await mention(MENTIONS + 1);
      expect(await pending()).toEqual([]);
      expect((await hubRow())?.mentionCount).toBe(MENTIONS + 1);
      expect((await store.repositories.graphReads.exportGraph(scope)).relationships[0]).toMatchObject({ mentionCount: MENTIONS + 1, weight: 2 * (MENTIONS + 1) });
      // Among the first: the hub and the relationship are summarised again.
      await mention(0);
      expect((await pending()).map((p) => p.id).sort()).toEqual([hubId, relationship.id].sort());
    });
  });
}
