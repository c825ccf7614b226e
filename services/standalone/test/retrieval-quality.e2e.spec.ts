import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { grpcCode } from './helpers';

const ROOT = resolve(__dirname, '../../..');
const FIXTURES = resolve(__dirname, 'fixtures/retrieval-quality');
const CORPUS = join(FIXTURES, 'corpus.jsonl');
const QUESTIONS = join(FIXTURES, 'questions.jsonl');
const run = promisify(execFile);

interface EvalReport {
  knowledgeBase: string;
  runs: Array<{ mode: string; strategy?: string; recall: Record<string, number>; perQuestion: Array<{ id: string; retrieved: string[]; gold: string[] }> }>;
}

async function trellis(args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'services/standalone/bin/trellis.js'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', TRELLIS_LOG_LEVEL: 'error' },
      timeout: 240_000,
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const e = error as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

/**
 * The retrieval-quality regression check: a small multi-hop corpus written for this test
 * (fixtures/retrieval-quality) is ingested by `trellis eval` over gRPC, and the default mode
 * must find every gold passage of every question in its top 5. A change that breaks
 * retrieval, or the eval command, fails here.
 */
describe('retrieval quality: trellis eval on a fixed multi-hop set', () => {
  let server: StandaloneProcess;
  let client: TrellisClient;
  let report: EvalReport;
  let table: string;
  const workDir = mkdtempSync(join(tmpdir(), 'trellis-eval-'));

  beforeAll(async () => {
    server = await startStandaloneProcess();
    client = new TrellisClient({ address: server.grpcAddress });
    const json = join(workDir, 'report.json');
    const result = await trellis(['--server', server.grpcAddress, 'eval', CORPUS, QUESTIONS, '--k', '2,5', '--strategy', 'weighted,ppr', '--json', json]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    table = result.stdout;
    report = JSON.parse(readFileSync(json, 'utf8')) as EvalReport;
  }, 300_000);

  afterAll(async () => {
    client?.close();
    await server?.dispose();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('prints Recall@k, MRR and latency for every mode and strategy', () => {
    expect(table).toMatch(/MODE\s+STRATEGY\s+R@2\s+R@5\s+MRR\s+P50 MS\s+P95 MS/);
    expect(report.runs.map((r) => `${r.mode}/${r.strategy ?? '-'}`)).toEqual(['vector/-', 'fulltext/-', 'graph/weighted', 'graph/ppr', 'hybrid/weighted', 'hybrid/ppr']);
  });

  it('retrieves every gold passage in the top 5 with the default mode and strategy', async () => {
    const questions = readFileSync(QUESTIONS, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: string; question: string; gold: string[] });
    const missed: string[] = [];
    for (const q of questions) {
      const { chunks } = await client.retrieveChunks({ knowledgeBase: report.knowledgeBase, query: q.question, topK: 5 });
      const passages = new Set(chunks.map((c) => c.sourceUri));
      for (const gold of q.gold) if (!passages.has(gold)) missed.push(`${q.id} (${q.question}): ${gold}`);
    }
    expect(missed).toEqual([]);
    for (const strategy of ['weighted', 'ppr']) {
      const hybrid = report.runs.find((r) => r.mode === 'hybrid' && r.strategy === strategy)!;
      expect(hybrid.recall['5']).toBe(1);
    }
  });

  it('says which signals found each hit, including the second hop', async () => {
    const { chunks } = await client.retrieveChunks({ knowledgeBase: report.knowledgeBase, query: 'In which city was the director of Harbour of Lanterns born?', topK: 5 });
    const sources = new Set(chunks.flatMap((c) => c.signals.map((s) => s.source)));
    expect(sources).toContain('fulltext');
    expect(sources).toContain('second-hop');
  });

  it('filters by source-URI prefix and by document metadata', async () => {
    const query = 'Where was the captain of Mirefield Rovers born?';
    const byTitle = await client.retrieveChunks({ knowledgeBase: report.knowledgeBase, query, topK: 5, filter: { sourceUriPrefix: '', metadata: { title: 'Seravel' } } });
    expect(byTitle.chunks.map((c) => c.documentMetadata['title'])).toEqual(['Seravel']);
    const first = (await client.retrieveChunks({ knowledgeBase: report.knowledgeBase, query, topK: 1, mode: 'fulltext' })).chunks[0]!;
    const byPrefix = await client.retrieveChunks({ knowledgeBase: report.knowledgeBase, query, topK: 5, filter: { sourceUriPrefix: first.sourceUri, metadata: {} } });
    expect(byPrefix.chunks.map((c) => c.sourceUri)).toEqual([first.sourceUri]);
    const none = await client.retrieveChunks({ knowledgeBase: report.knowledgeBase, query, filter: { sourceUriPrefix: 'no-such-source', metadata: {} } });
    expect(none.chunks).toEqual([]);
    const badKey = await grpcCode(client.retrieveChunks({ knowledgeBase: report.knowledgeBase, query, filter: { sourceUriPrefix: '', metadata: { ' ': 'x' } } }));
    expect(badKey.code).toBe(status.INVALID_ARGUMENT);
  });

  it('rejects an unknown graph strategy', async () => {
    const rejected = await grpcCode(client.retrieveChunks({ knowledgeBase: report.knowledgeBase, query: 'anything', strategy: 'random-walk' }));
    expect(rejected.code).toBe(status.INVALID_ARGUMENT);
    expect(rejected.details).toMatch(/weighted, ppr/);
  });

  it('names the file and line of a malformed eval file', async () => {
    const bad = join(workDir, 'bad-questions.jsonl');
    writeFileSync(bad, '{"id": "q1", "question": "Who?", "gold": ["nope"]}\n');
    const result = await trellis(['--server', server.grpcAddress, 'eval', CORPUS, bad]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${bad}:1: gold passage "nope" is not in the corpus`);

    const broken = join(workDir, 'broken-corpus.jsonl');
    writeFileSync(broken, `${readFileSync(CORPUS, 'utf8').split('\n')[0]}\n{"id": "x", "text":\n`);
    const parse = await trellis(['--server', server.grpcAddress, 'eval', broken, QUESTIONS]);
    expect(parse.code).toBe(1);
    expect(parse.stderr).toContain(`${broken}:2: not valid JSON`);
  });
});
