import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '@trellis/testing';

const ROOT = resolve(__dirname, '../../..');
const run = promisify(execFile);

describe('trellis CLI: extraction settings and LLM usage (--embedded, fake provider)', () => {
  const fake = new FakeOpenAiServer(64);
  const dataDir = mkdtempSync(join(tmpdir(), 'trellis-cli-llm-'));
  let env: Record<string, string>;

  beforeAll(async () => {
    fake.respondWith(() => ({ kind: 'content', content: JSON.stringify({ entities: [{ name: 'Aspirin', type: 'drug', description: 'A drug.', attributes: [] }], relationships: [] }) }));
    env = {
      PATH: process.env.PATH ?? '',
      TRELLIS_LOG_LEVEL: 'error',
      OPENAI_BASE_URL: await fake.start(),
      TRELLIS_LLM_MODEL: 'fake-model',
      TRELLIS_EMBEDDING_MODEL: 'fake-embed',
      TRELLIS_EMBEDDING_DIMENSIONS: '64',
    };
  });

  afterAll(async () => {
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const trellis = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [join(ROOT, 'services/standalone/bin/trellis.js'), '--embedded', '--data-dir', dataDir, ...args], { cwd: ROOT, env, timeout: 120_000 });
    return stdout;
  };

  it('creates and updates a knowledge base with extraction flags, and shows token usage in status', async () => {
    const instructions = join(dataDir, 'instructions.txt');
    writeFileSync(instructions, 'Only pharmacology.');
    expect(await trellis('kb', 'create', 'pharma', '--entity-types', 'drug,disease', '--instructions-file', instructions, '--llm-model', 'pharma-model')).toMatch(/created knowledge base pharma/);
    expect(await trellis('kb', 'update', 'pharma', '--gleaning', '1', '--output-mode', 'json_object')).toContain(
      'updated knowledge base pharma: llm model pharma-model, entity types drug,disease, gleaning 1, output json_object',
    );
    const doc = join(dataDir, 'aspirin.txt');
    writeFileSync(doc, 'Aspirin treats headaches.');
    await trellis('ingest', 'pharma', doc);
    const calls = fake.chatRequests();
    expect(calls).toHaveLength(2);
    expect(calls[0]!.body.model).toBe('pharma-model');
    expect(JSON.stringify(calls[0]!.body.messages)).toContain('Only pharmacology.');
    const status = await trellis('status', 'pharma');
    expect(status).toMatch(/LLM USAGE/);
    expect(status).toMatch(/aspirin\.txt\s+graphed.*2 calls · \d+ in \/ \d+ out/);
    expect(status).toMatch(/knowledge base LLM usage: 2 calls/);
  });
});
