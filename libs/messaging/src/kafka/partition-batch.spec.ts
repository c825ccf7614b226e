import { describe, expect, it } from 'vitest';
import type { DeliveryOutcome } from './event-delivery';
import { runPartitionBatch } from './partition-batch';
import type { BatchRecord } from './partition-batch';

const records = (keys: string): BatchRecord[] => [...keys].map((key, i) => ({ key, offset: String(100 + i) }));

/** Deliveries that finish when the test says so, with a log of what ran at once. */
function gatedDelivery() {
  const gates = new Map<string, (outcome: DeliveryOutcome | Error) => void>();
  const started: string[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const deliver = (record: BatchRecord) =>
    new Promise<DeliveryOutcome>((resolve, reject) => {
      started.push(record.offset);
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      gates.set(record.offset, (outcome) => {
        inFlight--;
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      });
    });
  const finish = async (offset: string, outcome: DeliveryOutcome | Error = 'handled') => {
    await until(() => gates.has(offset));
    gates.get(offset)!(outcome);
    gates.delete(offset);
  };
  return { deliver, finish, started, running: () => [...gates.keys()], most: () => mostInFlight };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 1));
  expect(condition()).toBe(true);
}

describe('runPartitionBatch', () => {
  it('handles distinct keys side by side, each key in offset order, up to its concurrency', async () => {
    const delivery = gatedDelivery();
    const commits: string[] = [];
    const batch = runPartitionBatch(records('abacbd'), { concurrency: 3, deliver: delivery.deliver, commit: async (o) => void commits.push(o), shouldAbandon: () => false });
    // a, b and c start; a's second record (102) waits for its first, and d for a free slot.
    await until(() => delivery.started.length === 3);
    expect(delivery.running()).toEqual(['100', '101', '103']);
    await delivery.finish('101');
    // b's second record takes the slot: the earliest waiting key goes first.
    await until(() => delivery.running().includes('104'));
    expect(delivery.running()).not.toContain('102');
    await delivery.finish('100');
    await until(() => delivery.running().includes('102'));
    for (const offset of ['103', '104', '102', '105']) await delivery.finish(offset);
    await batch;
    expect(delivery.most()).toBe(3);
    expect(delivery.started).toEqual(['100', '101', '103', '104', '102', '105']);
    // Commits move up to the first unhandled record only, and end at the last.
    expect(commits).toEqual(['101', '104', '105']);
  });

  it('gives a free slot to the earliest waiting record, not to the key that came first', async () => {
    const delivery = gatedDelivery();
    const batch = runPartitionBatch(records('abca'), { concurrency: 2, deliver: delivery.deliver, commit: async () => undefined, shouldAbandon: () => false });
    await delivery.finish('100');
    // a's next record (103) waits behind c's (102), though a came first in the batch.
    await until(() => delivery.running().includes('102'));
    expect(delivery.running()).toEqual(['101', '102']);
    for (const offset of ['101', '102', '103']) await delivery.finish(offset);
    await batch;
    expect(delivery.started).toEqual(['100', '101', '102', '103']);
  });

  it('commits nothing past a record still running, however many after it are done', async () => {
    const delivery = gatedDelivery();
    const commits: string[] = [];
    const batch = runPartitionBatch(records('abc'), { concurrency: 3, deliver: delivery.deliver, commit: async (o) => void commits.push(o), shouldAbandon: () => false });
    await delivery.finish('101');
    await delivery.finish('102');
    await new Promise((r) => setTimeout(r, 5));
    expect(commits).toEqual([]);
    await delivery.finish('100');
    await batch;
    expect(commits).toEqual(['102']);
  });

  it('starts nothing after an abandoned record, lets the running ones finish and commits the handled prefix', async () => {
    const delivery = gatedDelivery();
    const commits: string[] = [];
    const batch = runPartitionBatch(records('abcde'), { concurrency: 3, deliver: delivery.deliver, commit: async (o) => void commits.push(o), shouldAbandon: () => false });
    await delivery.finish('100');
    await until(() => delivery.running().includes('103'));
    await delivery.finish('101', 'abandoned');
    await delivery.finish('102');
    await delivery.finish('103');
    await batch;
    expect(delivery.started).toEqual(['100', '101', '102', '103']);
    expect(commits).toEqual(['100']);
  });

  it('throws what a delivery threw, once the others have finished, having committed only what came before it', async () => {
    const delivery = gatedDelivery();
    const commits: string[] = [];
    const batch = runPartitionBatch(records('abc'), { concurrency: 3, deliver: delivery.deliver, commit: async (o) => void commits.push(o), shouldAbandon: () => false });
    let settled = false;
    void batch.catch(() => undefined).then(() => (settled = true));
    await delivery.finish('100');
    await delivery.finish('101', new Error('dead letter write failed'));
    await new Promise((r) => setTimeout(r, 5));
    expect(settled).toBe(false);
    await delivery.finish('102');
    await expect(batch).rejects.toThrow('dead letter write failed');
    expect(commits).toEqual(['100']);
  });

  it('stops starting records once the partition is to be abandoned', async () => {
    const delivery = gatedDelivery();
    let abandon = false;
    const batch = runPartitionBatch(records('abc'), { concurrency: 1, deliver: delivery.deliver, commit: async () => undefined, shouldAbandon: () => abandon });
    abandon = true;
    await delivery.finish('100');
    await batch;
    expect(delivery.started).toEqual(['100']);
  });
});
