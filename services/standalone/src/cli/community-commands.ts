import type { Command } from 'commander';
import type { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { table } from './output';
import { integer } from './parsers';

type Run = (action: (client: TrellisClient, ...args: never[]) => Promise<number | void>) => (...args: unknown[]) => Promise<void>;

const out = process.stdout;

function describeRebuild(r: v1.RebuildCommunitiesResponse): string {
  return (
    `${r.full ? 'rebuilt' : 'refreshed'}: ${r.communities} communities in ${r.levels} levels, ${r.unchanged} unchanged, ${r.removed} removed; ` +
    `${r.reportsWritten} reports written (${r.llmCalls} LLM calls); detection ran on ${r.redetected.join(' / ')} nodes per level; ${(r.durationMs / 1000).toFixed(2)} s\n`
  );
}

/**
 * `trellis communities <kb>`: the communities of the knowledge base's entity graph (levels,
 * sizes, titles), `show` one with its key facts and members, `rebuild` them.
 */
export function addCommunityCommands(program: Command, run: Run): void {
  const communities = program
    .command('communities <kb>')
    .description('the communities of the entity graph: level, size, title (stale: members changed since the report)')
    .option('--level <n>', 'only this level (0 is the finest)', integer(0, 9))
    .option('--json', 'print JSON')
    .action(
      run(async (client, kb: string, opts: { level?: number; json?: boolean }) => {
        const list = await client.listCommunities(kb);
        const shown = opts.level === undefined ? list.communities : list.communities.filter((c) => c.level === opts.level);
        if (opts.json) return void out.write(`${JSON.stringify({ ...list, communities: shown }, null, 2)}\n`);
        if (list.communities.length === 0) return void out.write(`no communities yet: build them with \`trellis communities rebuild ${kb}\`\n`);
        const levels = [...new Set(list.communities.map((c) => c.level))].sort((a, b) => a - b);
        const perLevel = levels.map((l) => `level ${l}: ${list.communities.filter((c) => c.level === l).length}`).join(', ');
        const stale = list.communities.filter((c) => c.stale).length;
        out.write(`${list.communities.length} communities (${perLevel}); ${stale} stale; ${list.unassignedEntities} entities in none; refreshed ${list.refreshedAt || 'never'}\n`);
        const rows = shown.map((c) => [String(c.level), String(c.size), c.stale ? 'stale' : '', c.reportKind, c.id, c.title]);
        out.write(`${table([['LEVEL', 'SIZE', 'STALE', 'REPORT', 'ID', 'TITLE'], ...rows])}\n`);
      }),
    );
  communities
    .command('show <kb> <community-id>')
    .description('one community: its report, key facts with their sources, and members')
    .option('--json', 'print JSON')
    .action(
      run(async (client, kb: string, id: string, opts: { json?: boolean }) => {
        const detail = await client.getCommunity(kb, id);
        if (opts.json) return void out.write(`${JSON.stringify(detail, null, 2)}\n`);
        const c = detail.community!;
        out.write(`${c.title}\n  level ${c.level}, ${c.size} entities, ${c.reportKind} report${c.stale ? ', stale' : ''}${c.parentId ? `, in ${c.parentId}` : ''}\n\n${c.summary}\n\nKey facts:\n`);
        for (const f of detail.keyFacts) out.write(`  - ${f.text}\n    (${f.relationshipId}; chunks ${f.chunkIds.join(', ') || 'none'})\n`);
        out.write(`\nMembers: ${detail.members.map((m) => m.name).join(', ')}${c.size > detail.members.length ? `, … (${c.size - detail.members.length} more)` : ''}\n`);
      }),
    );
  communities
    .command('rebuild <kb>')
    .description('detect communities and write their reports again (unchanged reports are reused, not rewritten)')
    .option('--incremental', 'recompute only the communities whose members changed')
    .action(
      run(async (client, kb: string, opts: { incremental?: boolean }) => {
        out.write(describeRebuild(await client.rebuildCommunities(kb, opts.incremental === true)));
      }),
    );
}
