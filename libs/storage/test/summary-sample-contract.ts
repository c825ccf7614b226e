import { describe, expect, it } from 'vitest';
import { stableId } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import { MAX_SUMMARY_INPUT_CHARS } from '@trellis/graph';
import type { EntityMentionWrite, RelationshipMentionWrite } from '@trellis/graph';
import type { TrellisStore } from '../src/trellis-store';
import { eachStoreWithKnowledgeBase, saveTestDocument, vectorFor } from './store-contract';

/** Long enough that the sample is full after 48 of them (48 × 2,100 ≥ 100,000 characters). */
const DESCRIPTION_CHARS = 2_100;
const SAMPLED = Math.ceil(MAX_SUMMARY_INPUT_CHARS / DESCRIPTION_CHARS);
const MENTIONS = SAMPLED + 12;

const chunkId = (i: number) => `chk_${String(i).padStart(4, '0')}`;
const description = (i: number) => `Fact ${String(i).padStart(4, '0')}: ${'x'.repeat(DESCRIPTION_CHARS - 11)}`;

function hub(scope: KbScope, i: number, needsReview: boolean): EntityMentionWrite {
  return { entityId: stableId('ent', scope.kbId, 'hub'), name: 'Hub', normalizedName: 'hub', type: 'concept', description: description(i), needsReview, embedding: vectorFor(1) };
}

function uses(scope: KbScope, i: number): RelationshipMentionWrite {
  const sourceId = stableId('ent', scope.kbId, 'hub');
  const targetId = stableId('ent', scope.kbId, 'other');
  return { relationshipId: stableId('rel', sourceId, 'uses', targetId), sourceId, targetId, label: 'uses', description: description(i), strength: 2, embedding: vectorFor(2) };
}

/**
 * A hub's row from a bounded sample of its mentions (@trellis/graph's SummarySample), for every
 * TrellisStore adapter: its summary and summary hash from the first mentions in chunk order, its
 * counts, weight and review flag from all of them, and a mention past the sample leaves its
 * summary as it was (nothing to summarise or embed again).
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
      await store.repositories.chunks.upsertChunks(scope, [
        { id: chunkId(i), documentId: 'd1', version: 1, ordinal: i, text: `chunk ${i}`, heading: '', tokenCount: 2, contentHash: `h${i}`, embedding: vectorFor(i + 3) },
      ]);
      const other: EntityMentionWrite = { entityId: stableId('ent', scope.kbId, 'other'), name: 'Other', normalizedName: 'other', type: 'concept', description: 'The other end.', embedding: vectorFor(4) };
      await store.repositories.graphWrites.applyChunkExtraction(scope, chunkId(i), [hub(scope, i, needsReview), other], [uses(scope, i)]);
    }

    const pendingIds = async () => (await store.repositories.graphSummaries.listPendingSummaries(scope, 100)).map((p) => p.id);

    async function summariseAll(): Promise<void> {
      const pending = await store.repositories.graphSummaries.listPendingSummaries(scope, 100);
      await store.repositories.graphSummaries.saveSummaries(scope, pending.map((p) => ({ ...p, description: p.descriptions.join(' ').slice(0, 100), embedding: vectorFor(7) })));
    }

    it('derives the summary from the first mentions in chunk order and counts every mention', async () => {
      await saveTestDocument(store, scope, 'd1');
      // Every other chunk first, so the sample's order is the chunks', not the writes'.
      for (let i = 1; i <= MENTIONS; i += 2) await mention(i, true);
      for (let i = 2; i <= MENTIONS; i += 2) await mention(i, i < MENTIONS);
      const hubId = stableId('ent', scope.kbId, 'hub');
      const [entity] = await store.repositories.graphReads.getEntities(scope, [hubId]);
      // The sample's mentions all need review; one past it describes the hub.
      expect(entity).toMatchObject({ mentionCount: MENTIONS, needsReview: false });
      const pending = (await store.repositories.graphSummaries.listPendingSummaries(scope, 100)).find((p) => p.id === hubId)!;
      expect(pending.descriptions).toEqual(Array.from({ length: SAMPLED }, (_, i) => description(i + 1)));
      const relationship = (await store.repositories.graphReads.exportGraph(scope)).relationships[0]!;
      expect(relationship).toMatchObject({ mentionCount: MENTIONS, weight: 2 * MENTIONS });
      const relationshipPending = (await store.repositories.graphSummaries.listPendingSummaries(scope, 100)).find((p) => p.kind === 'relationship')!;
      expect(relationshipPending.descriptions).toHaveLength(SAMPLED);

      await summariseAll();
      expect(await pendingIds()).toEqual([]);
      // Past the sample in chunk order: counted, and nothing to summarise again.
      await mention(MENTIONS + 1);
      expect(await pendingIds()).toEqual([]);
      expect((await store.repositories.graphReads.getEntities(scope, [hubId]))[0]?.mentionCount).toBe(MENTIONS + 1);
      // Among the first: the hub and the relationship are summarised again.
      await mention(0);
      expect((await pendingIds()).sort()).toEqual([hubId, relationship.id].sort());
    });

    it('flags a hub for review when no mention describes it, inside its sample or past it', async () => {
      await saveTestDocument(store, scope, 'd1');
      for (let i = 1; i <= MENTIONS; i++) await mention(i, true);
      const hubId = stableId('ent', scope.kbId, 'hub');
      expect((await store.repositories.graphReads.getEntities(scope, [hubId]))[0]?.needsReview).toBe(true);
    });
  });
}
