import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TrellisClient } from '@trellis/client';
import { z } from 'zod';
import { fromGrpcError } from '../http-status';
import { apiMethod, responseToJson } from '../proto-json';

export interface McpOptions {
  /** The knowledge base tools use when the call names none (`trellis mcp --kb NAME`, `/mcp?kb=NAME`). */
  readonly knowledgeBase?: string;
  readonly version: string;
}

const knowledgeBaseArgument = (fixed: string | undefined) =>
  fixed === undefined
    ? z.string().describe('Name of the knowledge base (see list_knowledge_bases).')
    : z.string().optional().describe(`Name of the knowledge base; default "${fixed}".`);

/** A tool result: the proto3 JSON of the gRPC answer as text and as structured content. */
function result(text: string, structured: unknown): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured as Record<string, unknown> };
}

/** A gRPC refusal as a tool error the model can read (the gRPC message, e.g. `knowledge base "x" not found`). */
async function guarded(call: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await call();
  } catch (error) {
    const failure = fromGrpcError(error);
    return { isError: true, content: [{ type: 'text', text: `${failure.grpcStatus ?? 'error'}: ${failure.detail}` }] };
  }
}

const json = (service: 'KnowledgeBaseService' | 'GraphService' | 'RetrievalService' | 'ChatService', rpc: string, value: unknown) =>
  responseToJson(apiMethod(service, rpc).output, value) as Record<string, unknown>;

/**
 * An MCP server whose tools call the gRPC API as `caller`: search (RetrieveChunks), ask (Ask),
 * search_entities, get_entity and list_knowledge_bases. The gRPC servers validate every
 * argument and scope it to the caller's tenant, as for any other client.
 */
export function createMcpServer(caller: TrellisClient, options: McpOptions): McpServer {
  const server = new McpServer({ name: 'trellis', version: options.version });
  const kbOf = (given: string | undefined) => given ?? options.knowledgeBase ?? '';
  const kb = knowledgeBaseArgument(options.knowledgeBase);

  server.registerTool(
    'list_knowledge_bases',
    { title: 'List knowledge bases', description: 'The knowledge bases this key can use, with their descriptions and document counts.', inputSchema: {} },
    () =>
      guarded(async () => {
        const listed = json('KnowledgeBaseService', 'ListKnowledgeBases', await caller.listKnowledgeBases());
        const bases = listed['knowledgeBases'] as Array<{ name: string; description: string; documentCount: number }>;
        return result(bases.map((b) => `${b.name} (${b.documentCount} documents)${b.description ? `: ${b.description}` : ''}`).join('\n') || 'no knowledge bases', listed);
      }),
  );

  server.registerTool(
    'search',
    {
      title: 'Search chunks',
      description: 'Retrieve the passages of a knowledge base that best match a query, with their source and score.',
      inputSchema: {
        knowledgeBase: kb,
        query: z.string().describe('What to look for.'),
        mode: z.string().optional().describe("vector, fulltext, graph or hybrid; default: the server's."),
        k: z.number().int().optional().describe('How many chunks (default 5).'),
      },
    },
    ({ knowledgeBase, query, mode, k }) =>
      guarded(async () => {
        const found = json('RetrievalService', 'RetrieveChunks', await caller.retrieveChunks({ knowledgeBase: kbOf(knowledgeBase), query, mode: mode ?? '', topK: k ?? 5 }));
        const chunks = found['chunks'] as Array<{ sourceUri: string; score: number; text: string }>;
        return result(chunks.map((c, i) => `[${i + 1}] ${c.sourceUri} (score ${c.score.toFixed(3)})\n${c.text}`).join('\n\n') || 'no matching chunks', found);
      }),
  );

  server.registerTool(
    'ask',
    {
      title: 'Ask',
      description: 'Answer a question from a knowledge base; the answer cites its sources as [n].',
      inputSchema: { knowledgeBase: kb, question: z.string().describe('The question.') },
    },
    ({ knowledgeBase, question }) =>
      guarded(async () => {
        const answer = json('ChatService', 'Ask', await caller.ask({ knowledgeBase: kbOf(knowledgeBase), question }));
        const citations = answer['citations'] as Array<{ index: number; sourceUri: string }>;
        return result(`${answer['text'] as string}${citations.length > 0 ? `\n\nSources:\n${citations.map((c) => `[${c.index}] ${c.sourceUri}`).join('\n')}` : ''}`, answer);
      }),
  );

  server.registerTool(
    'search_entities',
    {
      title: 'Search entities',
      description: "Entities of a knowledge base's graph whose names match a query.",
      inputSchema: { knowledgeBase: kb, query: z.string().describe('Part of a name.'), limit: z.number().int().optional().describe('At most this many (default 10).') },
    },
    ({ knowledgeBase, query, limit }) =>
      guarded(async () => {
        const found = json('GraphService', 'SearchEntities', await caller.searchEntities({ knowledgeBase: kbOf(knowledgeBase), query, limit: limit ?? 10 }));
        const entities = found['entities'] as Array<{ id: string; name: string; type: string; description: string }>;
        return result(entities.map((e) => `${e.name} (${e.type}, ${e.id}): ${e.description}`).join('\n') || 'no matching entities', found);
      }),
  );

  server.registerTool(
    'get_entity',
    {
      title: 'Get entity',
      description: 'An entity (by id or name) with its relationships and neighbours.',
      inputSchema: { knowledgeBase: kb, entity: z.string().describe('Entity id or name.') },
    },
    ({ knowledgeBase, entity }) =>
      guarded(async () => {
        const detail = json('GraphService', 'GetEntity', await caller.getEntity(kbOf(knowledgeBase), entity));
        const { name, type, description } = detail['entity'] as { name: string; type: string; description: string };
        const relationships = detail['relationships'] as Array<{ sourceName: string; targetName: string; label: string; description: string }>;
        const lines = relationships.map((r) => `- ${r.sourceName} ${r.label || '→'} ${r.targetName}: ${r.description}`);
        return result([`${name} (${type}): ${description}`, ...lines].join('\n'), detail);
      }),
  );
  return server;
}
