import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { waitFor } from '@trellis/testing';

export const EXAMPLES_DIR = resolve(__dirname, '../../../examples');
const ROOT = resolve(__dirname, '../../..');

/** Runs the built `trellis` command; resolves with its output and exit code. */
export async function trellis(args: string[], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(ROOT, 'services/standalone/bin/trellis.js'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', TRELLIS_LOG_LEVEL: 'error', ...env },
      timeout: timeoutMs,
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const e = error as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

/** Uploads every file of examples/ over gRPC; returns the created documents. */
export async function uploadExamples(client: TrellisClient, kb: string): Promise<v1.Document[]> {
  const documents: v1.Document[] = [];
  for (const name of readdirSync(EXAMPLES_DIR).sort()) {
    documents.push(await client.uploadDocument({ knowledgeBase: kb, filename: name, sourceUri: `examples/${name}` }, readFileSync(join(EXAMPLES_DIR, name))));
  }
  return documents;
}

/** Waits until every listed document is graphed (or any failed: then throws). */
export async function waitUntilIndexed(client: TrellisClient, kb: string, ids: readonly string[], timeoutMs = 60_000): Promise<v1.Document[]> {
  return waitFor(
    async () => {
      const documents = await client.listAllDocuments(kb);
      const mine = documents.filter((d) => ids.includes(d.id));
      const failed = mine.find((d) => d.status === 'INDEX_STATUS_FAILED');
      if (failed) throw new Error(`${failed.sourceUri} failed: ${failed.error}`);
      return mine.length === ids.length && mine.every((d) => d.status === 'INDEX_STATUS_GRAPHED') ? mine : undefined;
    },
    timeoutMs,
    'documents to be indexed',
  );
}

/** The gRPC status code of a rejected call. */
export async function grpcCode(call: Promise<unknown>): Promise<{ code: number; details: string }> {
  try {
    await call;
  } catch (error) {
    const e = error as { code: number; details: string };
    return { code: e.code, details: e.details };
  }
  throw new Error('expected the call to fail');
}

/** The sum of a Prometheus scrape's samples of `name` whose labels include `labels`. */
export function sample(scrape: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of scrape.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = new Map([...(match[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    if (Object.entries(labels).every(([k, v]) => present.get(k) === v)) total += Number(match[3]);
  }
  return total;
}

/** One chat turn over gRPC, its events collected: the stages by name, and the answer. */
export async function chatTurn(client: TrellisClient, request: Partial<v1.ChatRequest>): Promise<{ stages: Map<string, string>; done: v1.Answer }> {
  const stages = new Map<string, string>();
  let done: v1.Answer | undefined;
  for await (const event of client.chat(request)) {
    if (event.stage) stages.set(event.stage.name, event.stage.detail);
    if (event.done) done = event.done;
  }
  if (done === undefined) throw new Error('the chat ended without an answer');
  return { stages, done };
}
