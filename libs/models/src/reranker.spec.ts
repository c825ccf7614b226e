import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HttpReranker } from './http-reranker';
import { LocalOverlapReranker } from './reranker';

describe('LocalOverlapReranker', () => {
  it('puts the passage that holds the rare query words first', async () => {
    const reranker = new LocalOverlapReranker();
    const scores = await reranker.rerank('Who designed the Elder Lattice Bridge?', [
      { id: 'generic', text: 'The bridge over the river was rebuilt after the flood.' },
      { id: 'answer', text: 'The Elder Lattice Bridge was designed by the engineer Philippa Crane.' },
      { id: 'other', text: 'Philippa Crane studied engineering in Dunmore.' },
    ]);
    expect(scores.map((s) => s.id)).toEqual(['answer', 'generic', 'other']);
    expect(scores[0]!.score).toBeGreaterThan(scores[1]!.score);
  });

  it('scores nothing for a query of stopwords', async () => {
    const scores = await new LocalOverlapReranker().rerank('who is the', [{ id: 'a', text: 'anything' }]);
    expect(scores).toEqual([{ id: 'a', score: 0 }]);
  });
});

describe('HttpReranker', () => {
  async function withServer(reply: (body: Record<string, unknown>) => { status: number; json: unknown }, test: (url: string, seen: Array<Record<string, unknown>>) => Promise<void>) {
    const seen: Array<Record<string, unknown>> = [];
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(raw) as Record<string, unknown>;
        seen.push({ ...body, path: req.url, authorization: req.headers.authorization });
        const { status, json } = reply(body);
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      await test(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`, seen);
    } finally {
      await new Promise((r) => server.close(r));
    }
  }
  const candidates = [
    { id: 'c1', text: 'first' },
    { id: 'c2', text: 'second' },
  ];

  it('speaks the Cohere/Jina/vLLM shape', async () => {
    await withServer(
      () => ({ status: 200, json: { results: [{ index: 1, relevance_score: 0.9 }, { index: 0, relevance_score: 0.2 }] } }),
      async (url, seen) => {
        const scores = await new HttpReranker({ baseUrl: url, model: 'rerank-v3', apiKey: 'k', timeoutMs: 5000 }).rerank('q', candidates);
        expect(scores).toEqual([{ id: 'c2', score: 0.9 }, { id: 'c1', score: 0.2 }]);
        expect(seen[0]).toMatchObject({ path: '/v1/rerank', model: 'rerank-v3', query: 'q', documents: ['first', 'second'], top_n: 2, authorization: 'Bearer k' });
      },
    );
  });

  it('accepts the TEI shape and reports failures as unavailable', async () => {
    await withServer(
      () => ({ status: 200, json: [{ index: 0, score: 3 }, { index: 1, score: 1 }] }),
      async (url) => {
        expect(await new HttpReranker({ baseUrl: url, model: 'bge', timeoutMs: 5000 }).rerank('q', candidates)).toEqual([{ id: 'c1', score: 3 }, { id: 'c2', score: 1 }]);
      },
    );
    await withServer(
      () => ({ status: 503, json: {} }),
      async (url) => {
        await expect(new HttpReranker({ baseUrl: url, model: 'bge', timeoutMs: 5000 }).rerank('q', candidates)).rejects.toThrow(/HTTP 503/);
      },
    );
  });
});
