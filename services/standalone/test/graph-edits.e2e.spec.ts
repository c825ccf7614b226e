import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { EXAMPLES_DIR, grpcCode, uploadExamples, waitUntilIndexed } from './helpers';

/**
 * Graph editing over gRPC on the standalone server: edits change what GetEntity and Retrieve
 * see, hold when every example is indexed again (new versions, re-extracted, old versions
 * purged), and a merge undone afterwards gives back the merged entity as it was.
 */
describe('standalone end to end: editing the graph', () => {
  let server: StandaloneProcess;
  let client: TrellisClient;
  const kb = 'edits';
  const ids: Record<string, string> = {};
  let before: Record<string, v1.Entity> = {};

  const entity = async (name: string) => (await client.getEntity(kb, name)).entity!;
  const retrieveRelationships = async (query: string) =>
    ((await client.retrieve({ knowledgeBase: kb, query, topK: 5, mode: 'graph', depth: 2 })).graph?.relationships ?? []).map((r) => r.relationship!.id);

  beforeAll(async () => {
    server = await startStandaloneProcess();
    client = new TrellisClient({ address: server.grpcAddress, actor: 'curator@example.org' });
    await client.createKnowledgeBase({ name: kb });
    const documents = await uploadExamples(client, kb);
    await waitUntilIndexed(client, kb, documents.map((d) => d.id));
    for (const name of ['Marie Curie', 'Marie Sklodowska', 'Claudius Regaud', 'Poland', 'Pierre Curie', 'Irène Joliot-Curie']) {
      const e = await entity(name);
      ids[name] = e.id;
      before = { ...before, [name]: e };
    }
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await server?.dispose();
  });

  const directedRadium = async () => {
    const detail = await client.getEntity(kb, ids['Irène Joliot-Curie']!);
    return detail.relationships.find((r) => r.label === 'directed' && r.targetName === 'Radium Institute')!;
  };

  it('edits the graph: merge, negative weight, delete, override, synopsis; all logged with the actor', async () => {
    const merged = await client.mergeEntities(kb, ids['Marie Sklodowska']!, ids['Marie Curie']!);
    expect(merged.edit).toMatchObject({ action: 'merge-entities', actor: 'curator@example.org', targetIds: [ids['Marie Sklodowska'], ids['Marie Curie']] });
    expect(merged.entity).toMatchObject({ id: ids['Marie Curie'], name: 'Marie Curie', mentionCount: before['Marie Curie']!.mentionCount + 1 });
    expect((await grpcCode(client.getEntity(kb, ids['Marie Sklodowska']!))).code).toBe(status.NOT_FOUND);
    expect((await grpcCode(client.mergeEntities(kb, ids['Marie Sklodowska']!, ids['Pierre Curie']!))).code).toBe(status.FAILED_PRECONDITION);
    expect((await grpcCode(client.mergeEntities(kb, ids['Marie Curie']!, ids['Marie Curie']!))).code).toBe(status.FAILED_PRECONDITION);

    const question = 'Who directed the Radium Institute?';
    const directed = await directedRadium();
    expect(await retrieveRelationships(question)).toContain(directed.id);
    const weighted = await client.updateRelationship({ knowledgeBase: kb, relationshipId: directed.id, weight: -1 });
    expect(weighted).toMatchObject({ weight: -1, chunkIds: directed.chunkIds });
    expect((await directedRadium()).weight).toBe(-1);
    expect(await retrieveRelationships(question)).not.toContain(directed.id);
    expect((await grpcCode(client.updateRelationship({ knowledgeBase: kb, relationshipId: directed.id, weight: Number.NaN }))).code).toBe(status.INVALID_ARGUMENT);

    await client.deleteEntity(kb, ids['Claudius Regaud']!);
    expect((await grpcCode(client.getEntity(kb, 'Claudius Regaud'))).code).toBe(status.NOT_FOUND);
    await client.updateEntity({ knowledgeBase: kb, entityId: ids['Poland']!, description: 'Where Marie Curie was born.' });
    expect((await grpcCode(client.updateEntity({ knowledgeBase: kb, entityId: ids['Poland']!, name: ' ' }))).code).toBe(status.INVALID_ARGUMENT);
    const synopsis = await client.createSynopsis({
      knowledgeBase: kb,
      name: 'Curie family',
      description: 'Marie, Pierre and Irène.',
      entityIds: [ids['Marie Curie']!, ids['Pierre Curie']!, ids['Irène Joliot-Curie']!],
    });
    expect(synopsis.entity).toMatchObject({ type: 'synopsis', name: 'Curie family' });
    expect(synopsis.neighbours.map((n) => n.name).sort()).toEqual(['Irène Joliot-Curie', 'Marie Curie', 'Pierre Curie']);
    ids['Curie family'] = synopsis.entity!.id;

    const { edits } = await client.listGraphEdits(kb);
    expect(edits.map((e) => e.action)).toEqual(['create-synopsis', 'update-entity', 'delete-entity', 'update-relationship', 'merge-entities']);
    expect(new Set(edits.map((e) => e.actor))).toEqual(new Set(['curator@example.org']));
  });

  it('the edits hold when every example is indexed again', async () => {
    const versions: v1.Document[] = [];
    for (const name of readdirSync(EXAMPLES_DIR).sort()) {
      const bytes = Buffer.concat([readFileSync(join(EXAMPLES_DIR, name)), Buffer.from('\n\nthis copy was indexed again.\n')]);
      versions.push(await client.uploadDocument({ knowledgeBase: kb, filename: name, sourceUri: `examples/${name}` }, bytes));
    }
    expect(versions.every((d) => d.version === 2)).toBe(true);
    await waitUntilIndexed(client, kb, versions.map((d) => d.id));

    expect((await grpcCode(client.getEntity(kb, ids['Marie Sklodowska']!))).code).toBe(status.NOT_FOUND);
    expect((await entity(ids['Marie Curie']!)).mentionCount).toBe(before['Marie Curie']!.mentionCount + 1);
    expect((await directedRadium()).weight).toBe(-1);
    expect(await retrieveRelationships('Who directed the Radium Institute?')).not.toContain((await directedRadium()).id);
    expect((await grpcCode(client.getEntity(kb, 'Claudius Regaud'))).code).toBe(status.NOT_FOUND);
    expect((await entity(ids['Poland']!)).description).toBe('Where Marie Curie was born.');
    const synopsis = await client.getEntity(kb, ids['Curie family']!);
    expect(synopsis.neighbours.map((n) => n.name).sort()).toEqual(['Irène Joliot-Curie', 'Marie Curie', 'Pierre Curie']);
  }, 120_000);

  it('undoing the merge afterwards restores both entities', async () => {
    const merge = (await client.listGraphEdits(kb)).edits.find((e) => e.action === 'merge-entities')!;
    const undone = await client.undoGraphEdit(kb, merge.id);
    expect(undone).toMatchObject({ id: merge.id, undoneBy: 'curator@example.org' });
    expect(await entity(ids['Marie Sklodowska']!)).toEqual(before['Marie Sklodowska']);
    expect((await entity(ids['Marie Curie']!)).mentionCount).toBe(before['Marie Curie']!.mentionCount);
    expect((await grpcCode(client.undoGraphEdit(kb, merge.id))).code).toBe(status.FAILED_PRECONDITION);
    expect((await client.listGraphEdits(kb)).edits.find((e) => e.id === merge.id)?.undoneAt).not.toBe('');
  });
});
