// npm run bench:global-search [-- CORPUS_DIR] [--hash] — corpus-wide questions answered by global search.
// Runs the built standalone server without a language model (extractive reports and overviews,
// the default local embedding model, or with --hash the hash embedder), indexes the corpus, builds its communities, then asks the
// corpus-wide questions of datasets/hotpotqa-100-global with scope "auto" and the corpus's own
// (local) questions likewise: prints how each was routed and why, and for the corpus-wide ones
// the themes the answer covers and the communities it cites.
import { join, resolve } from 'node:path';
import { TrellisClient } from '@trellis/client';
import { startStandaloneProcess } from '@trellis/testing';
import { loadAverage, machine, readJsonl, runBench } from './bench-kit.mjs';

const root = resolve(__dirname, '..');
const args = process.argv.slice(2);
const hashFlag = args.indexOf('--hash');
const hash = hashFlag !== -1 && args.splice(hashFlag, 1).length === 1;
const corpusDir = resolve(args[0] ?? join(root, '../shared/datasets/hotpotqa-100'));
const passages = readJsonl(corpusDir, 'corpus.jsonl') as Array<{ id: string; title: string; text: string }>;
const globalQuestions = readJsonl(join(root, 'datasets/hotpotqa-100-global'), 'questions.jsonl') as Array<{ id: string; question: string; themes: string[][] }>;
const localQuestions = readJsonl(corpusDir, 'questions.jsonl') as Array<{ question: string }>;

async function main(): Promise<void> {
  const server = await startStandaloneProcess({ env: hash ? { TRELLIS_EMBEDDINGS: 'hash' } : {} });
  const client = new TrellisClient({ address: server.grpcAddress, timeoutMs: 600_000 });
  const kb = 'global';
  try {
    await client.createKnowledgeBase({ name: kb });
    for (const p of passages) await client.uploadDocument({ knowledgeBase: kb, filename: `${p.id}.txt`, sourceUri: p.id }, Buffer.from(`${p.title}\n${p.text}`));
    for (;;) {
      const { documents } = await client.listDocuments(kb);
      if (documents.every((d) => d.status === 'INDEX_STATUS_GRAPHED' || d.status === 'INDEX_STATUS_FAILED')) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const built = await client.rebuildCommunities(kb);
    console.log(`communities: ${built.communities} in ${built.levels} levels, built in ${(built.durationMs / 1000).toFixed(2)} s (extractive reports)`);

    let covered = 0;
    let themes = 0;
    let routedGlobal = 0;
    for (const q of globalQuestions) {
      const answer = await client.ask({ knowledgeBase: kb, question: q.question, scope: 'auto', topK: 5 });
      const text = answer.text.toLowerCase();
      const hit = q.themes.filter((alternatives) => alternatives.some((k) => text.includes(k)));
      covered += hit.length;
      themes += q.themes.length;
      if (answer.route === 'global') routedGlobal++;
      console.log(`\n${q.id} ${q.question}\n  route: ${answer.route} (${answer.routeReason}); themes ${hit.length}/${q.themes.length}: ${hit.map((t) => t[0]).join(', ')}`);
      console.log(`  cites: ${answer.citations.map((c) => `[${c.index}] ${c.communityId} (${c.sourceChunkIds.length} chunks)`).join('; ')}`);
      console.log(answer.text.replace(/^/gm, '    '));
    }
    let routedLocal = 0;
    for (const q of localQuestions) {
      const answer = await client.ask({ knowledgeBase: kb, question: q.question, scope: 'auto', topK: 5 });
      if (answer.route === 'local') routedLocal++;
      else console.log(`local question routed global: ${q.question} (${answer.routeReason})`);
    }
    console.log(`\ncorpus-wide questions routed global: ${routedGlobal}/${globalQuestions.length}; themes covered ${covered}/${themes} (${((100 * covered) / themes).toFixed(0)} %)`);
    console.log(`hotpotqa-100 questions (about something in the corpus) routed local: ${routedLocal}/${localQuestions.length}`);
  } finally {
    client.close();
    await server.dispose();
  }
  console.log(`machine: ${machine()}, load ${loadAverage()}`);
}

runBench(main);
