import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import type { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { table } from './output';
import { integer } from './parsers';

type Run = (action: (client: TrellisClient, ...args: never[]) => Promise<number | void>) => (...args: unknown[]) => Promise<void>;

const out = process.stdout;

/** An entity id, or the id of the entity a name resolves to (GetEntity accepts both). */
async function entityId(client: TrellisClient, kb: string, idOrName: string): Promise<string> {
  return (await client.getEntity(kb, idOrName)).entity!.id;
}

function describeEdit(e: v1.GraphEdit): string {
  return `${e.id}  ${e.action} ${e.targetIds.join(' → ')} by ${e.actor}${e.undoneAt ? ` (undone by ${e.undoneBy})` : ''}`;
}

function weight(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`weight must be a number, got "${value}"`);
  return n;
}

/**
 * `trellis graph <subcommand>`: manual edits over the GraphService API. Entities are named by
 * id or name; every edit prints its edit id (for `trellis graph undo`) and is logged under
 * --actor (default: TRELLIS_ACTOR, else the login name).
 */
export function addGraphEditCommands(graph: Command, run: Run): void {
  graph
    .command('merge <kb> <source> <target>')
    .description('merge the source entity into the target (undo with `trellis graph unmerge <kb> <edit-id>`)')
    .action(
      run(async (client, kb: string, source: string, target: string) => {
        const merged = await client.mergeEntities(kb, await entityId(client, kb, source), await entityId(client, kb, target));
        out.write(`merged: ${describeEdit(merged.edit!)}\n${merged.entity!.name} now has ${merged.entity!.mentionCount} mentions\n`);
      }),
    );
  graph
    .command('undo <kb> <edit-id>')
    .alias('unmerge')
    .description('undo an edit (a merge restores both entities, with what was indexed meanwhile)')
    .action(
      run(async (client, kb: string, editId: string) => {
        out.write(`undone: ${describeEdit(await client.undoGraphEdit(kb, editId))}\n`);
      }),
    );
  graph
    .command('update-entity <kb> <entity>')
    .description("override an entity's name, type or description (re-indexing keeps it)")
    .option('--name <name>')
    .option('--type <type>')
    .option('--description <text>')
    .action(
      run(async (client, kb: string, entity: string, opts: { name?: string; type?: string; description?: string }) => {
        const updated = await client.updateEntity({ knowledgeBase: kb, entityId: await entityId(client, kb, entity), ...opts });
        out.write(`${updated.id}  ${updated.name} (${updated.type})\n  ${updated.description}\n`);
      }),
    );
  graph
    .command('delete-entity <kb> <entity>')
    .description('delete an entity and its relationships; re-extraction will not bring it back')
    .action(
      run(async (client, kb: string, entity: string) => {
        out.write(`deleted: ${describeEdit(await client.deleteEntity(kb, await entityId(client, kb, entity)))}\n`);
      }),
    );
  graph
    .command('delete-relationship <kb> <relationship-id>')
    .description('delete a relationship; re-extraction will not bring it back')
    .action(
      run(async (client, kb: string, relationshipId: string) => {
        out.write(`deleted: ${describeEdit(await client.deleteRelationship(kb, relationshipId))}\n`);
      }),
    );
  graph
    .command('set-weight <kb> <relationship-id> <weight>')
    .description("set a relationship's weight; a negative weight keeps it out of retrieval")
    .action(
      run(async (client, kb: string, relationshipId: string, value: string) => {
        const r = await client.updateRelationship({ knowledgeBase: kb, relationshipId, weight: weight(value) });
        out.write(`${r.sourceName} -[${r.label}]-> ${r.targetName}  weight ${r.weight}${r.weight < 0 ? ' (excluded from retrieval)' : ''}\n`);
      }),
    );
  graph
    .command('update-relationship <kb> <relationship-id>')
    .description("override a relationship's label, description or weight")
    .option('--label <label>')
    .option('--description <text>')
    .option('--weight <weight>', 'a negative weight keeps it out of retrieval', weight)
    .action(
      run(async (client, kb: string, relationshipId: string, opts: { label?: string; description?: string; weight?: number }) => {
        const r = await client.updateRelationship({ knowledgeBase: kb, relationshipId, ...opts });
        out.write(`${r.sourceName} -[${r.label}]-> ${r.targetName}  weight ${r.weight}\n  ${r.description}\n`);
      }),
    );
  graph
    .command('synopsis <kb> <name> <entities...>')
    .description('create a synopsis entity linked to a group of entities')
    .option('--description <text>', 'what the group is about', '')
    .option('--type <type>', 'entity type (default: synopsis)')
    .action(
      run(async (client, kb: string, name: string, entities: string[], opts: { description: string; type?: string }) => {
        const entityIds = await Promise.all(entities.map((e) => entityId(client, kb, e)));
        const detail = await client.createSynopsis({ knowledgeBase: kb, name, description: opts.description, entityIds, type: opts.type ?? '' });
        out.write(`${detail.entity!.id}  ${detail.entity!.name} (${detail.entity!.type}) → ${detail.neighbours.map((n) => n.name).join(', ')}\n`);
      }),
    );
  graph
    .command('log <kb>')
    .description('the edit log, newest first')
    .option('--limit <n>', 'how many edits (1 to 1000)', integer(1, 1000), 50)
    .option('--json', 'print JSON')
    .action(
      run(async (client, kb: string, opts: { limit: number; json?: boolean }) => {
        const { edits } = await client.listGraphEdits(kb, opts.limit);
        if (opts.json) return void out.write(`${JSON.stringify(edits, null, 2)}\n`);
        const rows = edits.map((e) => [e.id, e.createdAt, e.actor, e.action, e.targetIds.join(' → '), e.undoneAt ? `undone ${e.undoneAt} by ${e.undoneBy}` : '']);
        out.write(`${table([['EDIT', 'AT', 'ACTOR', 'ACTION', 'TARGETS', 'UNDONE'], ...rows])}\n`);
      }),
    );
}
