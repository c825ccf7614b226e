import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DistributedDeployment, freePort, waitFor } from '@trellis/testing';
import { fetchRetryingShed, readEvents } from './http-helpers';

const ROOT = resolve(__dirname, '../../..');
const EXAMPLES = join(ROOT, 'examples');
const kafkaBrokers = process.env.TRELLIS_TEST_KAFKA_BROKERS;
const mysqlUrl = process.env.TRELLIS_TEST_MYSQL_URL;

/**
 * The http-api service in front of the six distributed services (real Kafka and the SQL
 * store), each API at its own address as the Helm chart wires them: REST upload, indexing
 * progress as it happens across processes, and answers through the OpenAI-compatible endpoint.
 */
describe('distributed: the http-api service in front of six processes on Kafka and the SQL store', () => {
  let deployment: DistributedDeployment;
  let gateway: ChildProcess;
  let gatewayLog = '';
  let base = '';
  const auth = { authorization: 'Bearer dist-key' };

  beforeAll(async () => {
    if (!kafkaBrokers || !mysqlUrl) throw new Error('set TRELLIS_TEST_KAFKA_BROKERS and TRELLIS_TEST_MYSQL_URL (npm test does) to run the distributed HTTP API test');
    deployment = new DistributedDeployment({ kafkaBrokers, mysqlUrl, runId: randomBytes(4).toString('hex'), extraEnv: { TRELLIS_API_KEYS: 'dist-key=tenant-d', TRELLIS_EMBEDDINGS: 'hash' } });
    deployment.prepare();
    await deployment.startAll();
    const addresses = deployment.addresses();
    const [httpPort, apiPort] = [await freePort(), await freePort()];
    gateway = spawn(process.execPath, [join(ROOT, 'services/http-api/dist/main.js')], {
      env: {
        ...deployment.env,
        TRELLIS_HTTP_PORT: String(httpPort),
        TRELLIS_HTTP_API_PORT: String(apiPort),
        TRELLIS_HTTP_API_KNOWLEDGE_BASE_ADDRESS: addresses.knowledgeBases,
        TRELLIS_HTTP_API_GRAPH_ADDRESS: addresses.graph,
        TRELLIS_HTTP_API_RETRIEVAL_ADDRESS: addresses.retrieval,
        TRELLIS_HTTP_API_CHAT_ADDRESS: addresses.chat,
        TRELLIS_HTTP_API_PROGRESS_POLL_MS: '100',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    gateway.stdout?.on('data', (d: Buffer) => (gatewayLog += d.toString()));
    gateway.stderr?.on('data', (d: Buffer) => (gatewayLog += d.toString()));
    base = `http://127.0.0.1:${apiPort}`;
    await waitFor(async () => (await fetch(`http://127.0.0.1:${httpPort}/readyz`).catch(() => null))?.ok, 30_000, 'http-api to be ready');
  }, 240_000);

  afterAll(async () => {
    if (gateway && gateway.exitCode === null) {
      const exited = new Promise((r) => gateway.once('exit', r));
      gateway.kill('SIGTERM');
      await exited;
    }
    await deployment?.tearDown();
  });

  it('uploads over REST and streams the indexing progress that crosses the processes', async () => {
    const created = await fetchRetryingShed(`${base}/api/v1/knowledge-bases`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'curie' }) });
    expect(created.status, gatewayLog).toBe(201);
    const ids: string[] = [];
    const upload = async (name: string) => {
      const form = new FormData();
      form.set('file', new Blob([readFileSync(join(EXAMPLES, name))]), name);
      const uploaded = await fetchRetryingShed(`${base}/api/v1/knowledge-bases/curie/documents`, { method: 'POST', headers: auth, body: form });
      expect(uploaded.status).toBe(201);
      ids.push(((await uploaded.json()) as { id: string }).id);
    };
    const names = readdirSync(EXAMPLES).sort();
    for (const name of names.slice(0, -1)) await upload(name);
    // The last document is uploaded once the stream is open, so the stream sees it index
    // (the others may be graphed by then).
    const latest = new Map<string, string>();
    const seen: string[] = [];
    let allUploaded = false;
    const events = await fetchRetryingShed(`${base}/api/v1/knowledge-bases/curie/events`, { headers: auth });
    const followed = readEvents(events, (event) => {
      const document = JSON.parse(event.data) as { id: string; status: string };
      latest.set(document.id, document.status);
      seen.push(document.status);
      return allUploaded && ids.every((id) => latest.get(id) === 'INDEX_STATUS_GRAPHED');
    });
    await upload(names.at(-1)!);
    allUploaded = true;
    await followed;
    expect([...latest.keys()].sort()).toEqual([...ids].sort());
    // Statuses before the last were seen too: the stream followed indexing, it did not just report the end.
    expect(seen.filter((s) => s !== 'INDEX_STATUS_GRAPHED').length).toBeGreaterThan(0);
  }, 180_000);

  it('answers through the OpenAI-compatible endpoint: chat calls retrieval for the tenant', async () => {
    const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'dist-key', maxRetries: 5 });
    expect((await openai.models.list()).data.map((m) => m.id)).toEqual(['curie']);
    const completion = await openai.chat.completions.create({ model: 'curie', messages: [{ role: 'user', content: 'Who discovered polonium?' }] });
    expect(completion.choices[0]!.message.content).toMatch(/polonium[\s\S]*\[\d\]/i);
    const entities = (await (await fetchRetryingShed(`${base}/api/v1/knowledge-bases/curie/entities?query=Marie%20Curie`, { headers: auth })).json()) as { entities: Array<{ name: string }> };
    expect(entities.entities.map((e) => e.name)).toContain('Marie Curie');
  });
});
