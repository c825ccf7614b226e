import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { startStandaloneProcess, waitFor } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';

const ROOT = resolve(__dirname, '../../..');
const EXAMPLES = join(ROOT, 'examples');
const TOOLS = ['ask', 'get_entity', 'list_knowledge_bases', 'search', 'search_entities'];

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: Record<string, unknown> };
const text = (r: ToolResult) => r.content.map((c) => c.text).join('\n');

/** The MCP server, driven by the official SDK's client over streamable HTTP and over stdio. */
describe('MCP server', () => {
  let server: StandaloneProcess;
  const clients: Client[] = [];

  async function httpClient(key: string, query = ''): Promise<Client> {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.httpUrl}/mcp${query}`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    server = await startStandaloneProcess({ env: { TRELLIS_API_KEYS: 'key-of-a=tenant-a,key-of-b=tenant-b', TRELLIS_INTERNAL_TOKEN: 'a-long-internal-secret-for-the-test', TRELLIS_EMBEDDINGS: 'hash' } });
    const grpc = new TrellisClient({ address: server.grpcAddress, apiKey: 'key-of-a' });
    try {
      await grpc.createKnowledgeBase({ name: 'curie', description: 'the Curies' });
      for (const name of readdirSync(EXAMPLES).sort()) await grpc.uploadDocument({ knowledgeBase: 'curie', filename: name, sourceUri: `examples/${name}` }, readFileSync(join(EXAMPLES, name)));
      await waitFor(async () => (await grpc.listDocuments('curie')).documents.every((d) => d.status === 'INDEX_STATUS_GRAPHED') || undefined, 60_000, 'indexing');
    } finally {
      grpc.close();
    }
  }, 120_000);

  afterAll(async () => {
    for (const client of clients) await client.close();
    await server?.dispose();
  });

  it('lists the five tools and answers them over streamable HTTP at /mcp, as the key\'s tenant', async () => {
    const client = await httpClient('key-of-a', '?kb=curie');
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(TOOLS);

    const listed = (await client.callTool({ name: 'list_knowledge_bases', arguments: {} })) as ToolResult;
    expect(text(listed)).toBe('curie (5 documents): the Curies');

    const search = (await client.callTool({ name: 'search', arguments: { query: 'Who discovered polonium?', mode: 'hybrid', k: 2 } })) as ToolResult;
    expect((search.structuredContent!['chunks'] as unknown[]).length).toBe(2);
    expect(text(search)).toMatch(/^\[1\] examples\/\S+ \(score [\d.]+\)\n/);

    const ask = (await client.callTool({ name: 'ask', arguments: { question: 'Who discovered polonium?' } })) as ToolResult;
    expect(text(ask)).toMatch(/polonium[\s\S]*\[1\][\s\S]*Sources:\n\[1\] examples\//i);

    const entities = (await client.callTool({ name: 'search_entities', arguments: { query: 'Marie Curie', limit: 3 } })) as ToolResult;
    expect(text(entities)).toContain('Marie Curie (person');
    const entity = (await client.callTool({ name: 'get_entity', arguments: { entity: 'Marie Curie' } })) as ToolResult;
    expect(text(entity)).toMatch(/^Marie Curie \(person\): [\s\S]*\n- /);
  });

  it('keeps tenants apart and reports refusals as tool errors with the gRPC message', async () => {
    const other = await httpClient('key-of-b');
    expect(text((await other.callTool({ name: 'list_knowledge_bases', arguments: {} })) as ToolResult)).toBe('no knowledge bases');
    const foreign = (await other.callTool({ name: 'ask', arguments: { knowledgeBase: 'curie', question: 'Who?' } })) as ToolResult;
    expect(foreign.isError).toBe(true);
    expect(text(foreign)).toBe('NOT_FOUND: knowledge base "curie" not found');
    const refused = new Client({ name: 'test', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.httpUrl}/mcp`), { requestInit: { headers: { authorization: 'Bearer wrong' } } });
    await expect(refused.connect(transport)).rejects.toThrow(/401[\s\S]*a valid API key is required/);
  });

  it('serves the same tools over stdio with `trellis mcp --kb NAME`', async () => {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(ROOT, 'services/standalone/bin/trellis.js'), '--server', server.grpcAddress, '--api-key', 'key-of-a', 'mcp', '--kb', 'curie'],
        env: { PATH: process.env.PATH ?? '' },
        stderr: 'pipe',
      }),
    );
    clients.push(client);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(TOOLS);
    const ask = (await client.callTool({ name: 'ask', arguments: { question: 'Who discovered polonium?' } })) as ToolResult;
    expect(ask.isError).toBeFalsy();
    expect(text(ask)).toMatch(/polonium[\s\S]*Sources:/i);
    const missing = (await client.callTool({ name: 'search', arguments: { knowledgeBase: 'nope', query: 'x' } })) as ToolResult;
    expect(text(missing)).toBe('NOT_FOUND: knowledge base "nope" not found');
  });
});
