import { readFileSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { REST_ROUTES } from '../src/adapters/rest-routes';
import { fetchRetryingShed, readEvents, sendLargeBody } from './http-helpers';

const EXAMPLES = resolve(__dirname, '../../../examples');
const KEYS = 'key-of-a=tenant-a,key-of-b=tenant-b';
const MAX_UPLOAD = 200_000;
const A = { authorization: 'Bearer key-of-a' };
const B = { authorization: 'Bearer key-of-b' };
const JSON_TYPE = { 'content-type': 'application/json' };

/** The REST API of a real standalone server (built output), with API keys for two tenants. */
describe('REST API', () => {
  let server: StandaloneProcess;
  let base: string;
  const documentIds: string[] = [];

  const api = (path: string, init: RequestInit = {}) => fetchRetryingShed(`${base}${path}`, init);
  const json = async (response: Response) => ({ status: response.status, type: response.headers.get('content-type'), body: (await response.json()) as Record<string, unknown> });

  beforeAll(async () => {
    server = await startStandaloneProcess({
      env: { TRELLIS_API_KEYS: KEYS, TRELLIS_INTERNAL_TOKEN: 'a-long-internal-secret-for-the-test', TRELLIS_EMBEDDINGS: 'hash', TRELLIS_MAX_UPLOAD_BYTES: String(MAX_UPLOAD), TRELLIS_HTTP_API_PROGRESS_POLL_MS: '100' },
    });
    base = server.httpUrl;
    expect((await api('/api/v1/knowledge-bases', { method: 'POST', headers: { ...A, ...JSON_TYPE }, body: JSON.stringify({ name: 'curie', description: 'examples' }) })).status).toBe(201);
    for (const name of readdirSync(EXAMPLES).sort()) {
      const form = new FormData();
      form.set('file', new Blob([readFileSync(join(EXAMPLES, name))]), name);
      form.set('metadata', JSON.stringify({ sourceUri: `examples/${name}`, metadata: { set: 'examples' } }));
      const uploaded = await json(await api('/api/v1/knowledge-bases/curie/documents', { method: 'POST', headers: A, body: form }));
      expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(201);
      expect(uploaded.body).toMatchObject({ filename: name, sourceUri: `examples/${name}`, metadata: { set: 'examples' } });
      documentIds.push(uploaded.body['id'] as string);
    }
    expect((await api('/api/v1/knowledge-bases', { method: 'POST', headers: { ...A, ...JSON_TYPE }, body: JSON.stringify({ name: 'only-a' }) })).status).toBe(201);
    // Tenant B has a knowledge base of the same name.
    expect((await api('/api/v1/knowledge-bases', { method: 'POST', headers: { ...B, ...JSON_TYPE }, body: JSON.stringify({ name: 'curie' }) })).status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await server?.dispose();
  });

  it('streams a document\'s indexing progress as server-sent events until it is graphed', async () => {
    for (const id of documentIds) {
      const response = await api(`/api/v1/knowledge-bases/curie/documents/${id}/events`, { headers: A });
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events = await readEvents(response);
      const documents = events.map((e) => JSON.parse(e.data) as { id: string; status: string });
      expect(events.every((e) => e.event === 'document')).toBe(true);
      expect(documents.every((d) => d.id === id)).toBe(true);
      expect(documents.at(-1)!.status).toBe('INDEX_STATUS_GRAPHED');
    }
    const listed = await json(await api('/api/v1/knowledge-bases/curie/documents', { headers: A }));
    expect((listed.body['documents'] as Array<{ status: string }>).map((d) => d.status)).toEqual(documentIds.map(() => 'INDEX_STATUS_GRAPHED'));
  }, 90_000);

  it('answers retrieval, ask, graph and edit operations with the same data gRPC gives', async () => {
    const grpc = new TrellisClient({ address: server.grpcAddress, apiKey: 'key-of-a' });
    try {
      const question = 'Who discovered polonium?';
      const retrieved = await json(await api('/api/v1/knowledge-bases/curie/retrieve/chunks', { method: 'POST', headers: { ...A, ...JSON_TYPE }, body: JSON.stringify({ query: question, topK: 3, mode: 'hybrid' }) }));
      const overGrpc = await grpc.retrieveChunks({ knowledgeBase: 'curie', query: question, topK: 3, mode: 'hybrid' });
      expect(retrieved.status).toBe(200);
      expect((retrieved.body['chunks'] as Array<{ chunkId: string }>).map((c) => c.chunkId)).toEqual(overGrpc.chunks.map((c) => c.chunkId));

      const answer = await json(await api('/api/v1/knowledge-bases/curie/ask', { method: 'POST', headers: { ...A, ...JSON_TYPE }, body: JSON.stringify({ question }) }));
      expect(answer.status).toBe(200);
      expect(answer.body['text']).toMatch(/polonium[\s\S]*\[\d\]/i);
      expect((answer.body['citations'] as unknown[]).length).toBeGreaterThan(0);

      const found = await json(await api('/api/v1/knowledge-bases/curie/entities?query=Marie%20Curie&limit=3', { headers: A }));
      const entity = (found.body['entities'] as Array<{ id: string; name: string }>)[0]!;
      expect(entity.name).toBe('Marie Curie');
      const detail = await json(await api(`/api/v1/knowledge-bases/curie/entities/${entity.id}`, { headers: A }));
      expect(detail.body).toMatchObject({ entity: { id: entity.id, name: 'Marie Curie' } });

      const renamed = await json(await api(`/api/v1/knowledge-bases/curie/entities/${entity.id}`, { method: 'PATCH', headers: { ...A, ...JSON_TYPE, 'x-trellis-actor': 'http-test' }, body: JSON.stringify({ description: 'Physicist and chemist.' }) }));
      expect(renamed.body).toMatchObject({ id: entity.id, description: 'Physicist and chemist.' });
      const edits = await json(await api('/api/v1/knowledge-bases/curie/graph/edits?limit=1', { headers: A }));
      const edit = (edits.body['edits'] as Array<{ id: string; actor: string }>)[0]!;
      expect(edit.actor).toBe('http-test');
      expect((await api(`/api/v1/knowledge-bases/curie/graph/edits/${edit.id}/undo`, { method: 'POST', headers: A })).status).toBe(200);
      expect((await grpc.getEntity('curie', entity.id)).entity!.description).not.toBe('Physicist and chemist.');
    } finally {
      grpc.close();
    }
  });

  it('streams chat as server-sent events: stages, tokens, citations, then the answer', async () => {
    const response = await api('/api/v1/knowledge-bases/curie/chat', { method: 'POST', headers: { ...A, ...JSON_TYPE, accept: 'text/event-stream' }, body: JSON.stringify({ question: 'Who discovered polonium?' }) });
    expect(response.status).toBe(200);
    const events = await readEvents(response);
    const kinds = events.map((e) => e.event);
    expect(kinds).toContain('stage');
    expect(kinds.filter((k) => k === 'token').length).toBeGreaterThan(3);
    expect(kinds.at(-1)).toBe('done');
    const tokens = events.filter((e) => e.event === 'token').map((e) => (JSON.parse(e.data) as { token: string }).token).join('');
    const done = JSON.parse(events.at(-1)!.data) as { done: { text: string; citations: unknown[] } };
    expect(done.done.text).toBe(tokens);
    expect(done.done.citations.length).toBeGreaterThan(0);
  });

  it('refuses a site crawl it may not make with problem+json before any event', async () => {
    const refused = await json(await api('/api/v1/knowledge-bases/curie/sites', { method: 'POST', headers: { ...A, ...JSON_TYPE }, body: JSON.stringify({ crawlUrl: `${base}/metrics` }) }));
    expect(refused).toMatchObject({ status: 400, type: 'application/problem+json', body: { detail: expect.stringMatching(/refusing to fetch/) } });
    const both = await json(await api('/api/v1/knowledge-bases/curie/sites', { method: 'POST', headers: { ...A, ...JSON_TYPE }, body: JSON.stringify({ crawlUrl: 'https://example.org/', sitemapUrl: 'https://example.org/sitemap.xml' }) }));
    expect(both).toMatchObject({ status: 400, body: { detail: expect.stringMatching(/exactly one of sitemap_url and crawl_url/) } });
  });

  it('refuses a missing or wrong key with 401 and the message gRPC gives', async () => {
    const grpc = new TrellisClient({ address: server.grpcAddress, apiKey: 'wrong' });
    const grpcMessage = await grpc.listKnowledgeBases().then(
      () => 'accepted',
      (error: { details: string }) => error.details,
    );
    grpc.close();
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: 'Basic a2V5LW9mLWE=' }] as Array<Record<string, string>>) {
      const response = await json(await api('/api/v1/knowledge-bases', { headers }));
      expect(response.status).toBe(401);
      expect(response.type).toBe('application/problem+json');
      expect(response.body['detail']).toBe(grpcMessage);
    }
    expect(grpcMessage).toBe('a valid API key is required');
  });

  it("answers 404 for another tenant's knowledge bases and ids, and lists only the caller's own", async () => {
    const [id] = documentIds;
    for (const path of [`/api/v1/knowledge-bases/curie/documents/${id}`, '/api/v1/knowledge-bases/only-a', '/api/v1/knowledge-bases/only-a/documents']) {
      const response = await json(await api(path, { headers: B }));
      expect(response.status, path).toBe(404);
      expect(response.type).toBe('application/problem+json');
    }
    expect((await api(`/api/v1/knowledge-bases/curie/documents/${id}`, { method: 'DELETE', headers: B })).status).toBe(404);
    // A chat stream is refused before it opens, not with an error event inside a 200.
    const chat = await api('/api/v1/knowledge-bases/only-a/chat', { method: 'POST', headers: { ...B, ...JSON_TYPE }, body: JSON.stringify({ question: 'Who?' }) });
    expect([chat.status, chat.headers.get('content-type')]).toEqual([404, 'application/problem+json']);
    expect((await api(`/api/v1/knowledge-bases/curie/documents/${id}`, { headers: A })).status).toBe(200);
    const listed = await json(await api('/api/v1/knowledge-bases', { headers: B }));
    expect((listed.body['knowledgeBases'] as Array<{ description: string }>).map((k) => k.description)).toEqual(['']);
  });

  it('refuses an oversized upload with 413 before reading its body, declared or chunked', async () => {
    const url = `${base}/api/v1/knowledge-bases/curie/documents`;
    const headers = { ...A, 'content-type': 'multipart/form-data; boundary=x' };
    const declared = await sendLargeBody(url, headers, 5_000_000, 5_000_000);
    expect(declared.status).toBe(413);
    expect(declared.bytesWritten).toBe(0);
    expect(JSON.parse(declared.body)).toMatchObject({ status: 413, detail: expect.stringMatching(/larger than/) });
    // Sent without a pause, again and again: the answer arrives every time, never a reset
    // connection (the server lingers before it closes), and the server stopped reading near
    // the limit instead of taking the whole 50 MB.
    for (let attempt = 0; attempt < 12; attempt++) {
      const chunked = await sendLargeBody(url, headers, 50_000_000);
      expect(chunked.status).toBe(413);
      expect(chunked.bytesWritten).toBeLessThan(20_000_000);
    }
    // Nothing was stored.
    const listed = await json(await api('/api/v1/knowledge-bases/curie/documents', { headers: A }));
    expect((listed.body['documents'] as unknown[]).length).toBe(documentIds.length);
  });

  it('answers malformed JSON with 400 naming the field, and unknown routes with 404 problem+json', async () => {
    const post = (body: string) => api('/api/v1/knowledge-bases/curie/retrieve/chunks', { method: 'POST', headers: { ...A, ...JSON_TYPE }, body });
    const wrongType = await json(await post(JSON.stringify({ query: 'x', topK: 'many' })));
    expect(wrongType).toMatchObject({ status: 400, type: 'application/problem+json', body: { field: 'topK', detail: expect.stringContaining('top_k') } });
    const unknownField = await json(await post(JSON.stringify({ query: 'x', colour: 'red' })));
    expect(unknownField).toMatchObject({ status: 400, body: { field: 'colour' } });
    const syntax = await json(await post('{"query": '));
    expect(syntax).toMatchObject({ status: 400, body: { detail: expect.stringMatching(/not valid JSON/) } });
    const nested = await json(await api('/api/v1/knowledge-bases', { method: 'POST', headers: { ...A, ...JSON_TYPE }, body: JSON.stringify({ name: 'n', chunking: { chunkSizeTokens: -3 } }) }));
    expect(nested).toMatchObject({ status: 400, body: { field: 'chunking.chunkSizeTokens' } });
    const query = await json(await api('/api/v1/knowledge-bases/curie/entities?limit=lots', { headers: A }));
    expect(query).toMatchObject({ status: 400, body: { field: 'limit' } });
    // Request targets that do not parse as URLs are answered, and the server stays up.
    for (const target of ['//[', '//:99999/api/v1', '/api/v1/knowledge-bases/%E0%A4%A']) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${base}/`, { path: target, headers: A }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      expect(status, target).toBe(404);
    }
    for (const path of ['/api/v2/anything', '/api/v1/knowledge-bases/curie/nothing', '/api']) {
      const unknown = await json(await api(path, { headers: A }));
      expect(unknown, path).toMatchObject({ status: 404, type: 'application/problem+json', body: { status: 404 } });
    }
  });

  it('never answers 500 to a client mistake on any route', async () => {
    const statuses: string[] = [];
    for (const route of REST_ROUTES) {
      const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'knowledgeBase' ? 'curie' : 'no-such-id'));
      for (const body of ['{"bad json', '[]', JSON.stringify({ knowledgeBase: 'other' }), '{}']) {
        const init: RequestInit = route.method === 'GET' || route.method === 'DELETE' ? { method: route.method, headers: A } : { method: route.method, headers: { ...A, ...JSON_TYPE }, body };
        const response = await api(path, { ...init, signal: AbortSignal.timeout(10_000) });
        statuses.push(`${route.method} ${path} ${response.status}`);
        if (response.headers.get('content-type')?.startsWith('text/event-stream')) await response.body?.cancel();
        else await response.text();
        expect(response.status, `${route.method} ${path} with ${body}`).toBeLessThan(500);
        if (route.method === 'GET' || route.method === 'DELETE') break;
      }
    }
    expect(statuses.length).toBeGreaterThan(REST_ROUTES.length);
  }, 60_000);

  it('counts requests in /metrics by route template and status, with no knowledge-base name or id', async () => {
    const scrape = await (await api('/metrics')).text();
    const lines = scrape.split('\n').filter((l) => l.startsWith('trellis_http_requests_total{'));
    expect(lines.some((l) => l.includes('route="/api/v1/knowledge-bases/{knowledgeBase}/documents"') && l.includes('method="POST"') && l.includes('status="201"'))).toBe(true);
    expect(lines.some((l) => l.includes('route="unmatched"') && l.includes('status="404"'))).toBe(true);
    expect(lines.some((l) => l.includes('curie') || l.includes('doc_'))).toBe(false);
  });

  it('serves an OpenAPI 3.1 document covering every gRPC method, and a docs page listing it', async () => {
    const document = (await (await api('/api/openapi.json')).json()) as { openapi: string; paths: Record<string, Record<string, { 'x-grpc-method': string; operationId: string }>> };
    expect(document.openapi).toBe('3.1.0');
    const operations = Object.values(document.paths).flatMap((p) => Object.values(p));
    const grpcMethods = new Set(operations.map((o) => o['x-grpc-method']));
    const proto = ['knowledge_base', 'graph', 'retrieval', 'chat'].flatMap((file) =>
      [...readFileSync(resolve(__dirname, `../../../proto/trellis/v1/${file}.proto`), 'utf8').matchAll(/service (\w+)[\s\S]*?\n\}/g)].flatMap((s) =>
        [...s[0].matchAll(/rpc (\w+)\(/g)].map((m) => `trellis.v1.${s[1]}/${m[1]}`),
      ),
    );
    console.log(`OpenAPI: ${operations.length} operations (${grpcMethods.size} distinct gRPC methods, 2 of them polled by event streams) for ${proto.length} gRPC methods`);
    expect(proto).toHaveLength(43);
    expect([...grpcMethods].sort()).toEqual([...proto].sort());
    expect(new Set(operations.map((o) => o.operationId)).size).toBe(operations.length);
    const docs = await api('/api/docs');
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await docs.text();
    expect(html).not.toMatch(/<script|https?:\/\/(?!127)/);
    expect(html.match(/<tr><td class="m/g)).toHaveLength(operations.length);
  });
});
