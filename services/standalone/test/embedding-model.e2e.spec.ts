import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { EXAMPLES_DIR, grpcCode, trellis, uploadExamples, waitUntilIndexed } from './helpers';

/**
 * The default server embeds with the real local model (fetched by `npm test`), records it in
 * each knowledge base, and refuses new text for a knowledge base whose vectors another model
 * made, while still answering its queries, until `reindex` moves it to the server's model.
 */
describe('the embedding model of a knowledge base', () => {
  let server: StandaloneProcess;
  let client: TrellisClient;
  let dataDir: string;

  const start = async (env: Record<string, string>) => {
    server = await startStandaloneProcess({ env, dataDir });
    client = new TrellisClient({ address: server.grpcAddress });
  };
  const restart = async (env: Record<string, string>) => {
    client.close();
    await server.stop();
    await start(env);
  };

  beforeAll(async () => {
    await start({ TRELLIS_EMBEDDINGS: 'hash' });
    dataDir = server.dataDir;
    await client.createKnowledgeBase({ name: 'science' });
    const documents = await uploadExamples(client, 'science');
    await waitUntilIndexed(client, 'science', documents.map((d) => d.id));
  }, 180_000);

  afterAll(async () => {
    client?.close();
    await server?.dispose();
  });

  it('is recorded when the knowledge base is created', async () => {
    expect((await client.getKnowledgeBase('science')).models?.embeddingModel).toBe('local-hash-v1-512');
  });

  it('by default is the local sentence-embedding model, named in the banner', async () => {
    await restart({});
    expect(server.output()).toMatch(/Embeddings: local:all-MiniLM-L6-v2 \(384 dimensions, in process\)/);
  }, 120_000);

  it('falls back to hash embeddings when the model cannot be had, and the banner and status say how to fix it', async () => {
    const fallback = await startStandaloneProcess({ env: { TRELLIS_MODEL_CACHE_DIR: join(dataDir, 'no-models'), TRELLIS_MODEL_DOWNLOAD: 'false' } });
    try {
      expect(fallback.output()).toMatch(/Embeddings: WARNING hash embeddings .*npm run models/);
      const fallbackClient = new TrellisClient({ address: fallback.grpcAddress });
      await fallbackClient.createKnowledgeBase({ name: 'plain' });
      fallbackClient.close();
      const report = await trellis(['--server', fallback.grpcAddress, 'status', 'plain']);
      expect(report.stdout).toMatch(/warning: embedding model all-MiniLM-L6-v2 is not in .*TRELLIS_EMBEDDING_MODEL_DIR/);
    } finally {
      await fallback.dispose();
    }
  }, 120_000);

  it('refuses new text for a knowledge base of another model, naming the fix, and still answers its queries', async () => {
    const upload = grpcCode(client.uploadDocument({ knowledgeBase: 'science', filename: 'more.txt' }, Buffer.from('Radium glows in the dark.')));
    const refused = await upload;
    expect(refused.code).toBe(status.FAILED_PRECONDITION);
    expect(refused.details).toMatch(/local-hash-v1-512.*local:all-MiniLM-L6-v2.*trellis reindex science/);
    const { chunks } = await client.retrieveChunks({ knowledgeBase: 'science', query: 'Who discovered polonium?', topK: 3 });
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks[0]!.text).toMatch(/polonium/i);
    const report = await trellis(['--server', server.grpcAddress, 'status', 'science']);
    expect(report.stdout).toMatch(/embeddings: local-hash-v1-512; server: local:all-MiniLM-L6-v2/);
    expect(report.stdout).toMatch(/Run `trellis reindex science`/);
  }, 60_000);

  it('moves to the server model on reindex and then searches by meaning', async () => {
    const { documents } = await client.reindexKnowledgeBase('science');
    await waitUntilIndexed(client, 'science', documents.map((d) => d.id), 180_000);
    expect((await client.getKnowledgeBase('science')).models?.embeddingModel).toBe('local:all-MiniLM-L6-v2');
    // Accepted now.
    const more = await client.uploadDocument({ knowledgeBase: 'science', filename: 'polonium-copy.txt' }, readFileSync(join(EXAMPLES_DIR, 'polonium.txt')));
    expect(more.id).not.toBe('');
    // A paraphrase with none of the passage's key words still finds it by vector search.
    const { chunks } = await client.retrieveChunks({ knowledgeBase: 'science', query: 'Which scientist shared a physics prize with her husband?', mode: 'vector', topK: 3 });
    expect(chunks.map((c) => c.text).join(' ')).toMatch(/Nobel Prize in Physics/);
  }, 240_000);
});
