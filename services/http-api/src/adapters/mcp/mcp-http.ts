import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { TrellisClient } from '@trellis/client';
import { readJsonBody } from '../request-body';
import { createMcpServer } from './mcp-tools';

/**
 * MCP over streamable HTTP at /mcp, stateless: each POST gets its own server and transport, so
 * any replica can answer any request and nothing is kept between them. The tools act as the
 * request's caller (its Bearer key); `?kb=NAME` sets their default knowledge base. A JSON body
 * is read with the REST API's limit and answered as JSON. The `initialize` request lists the
 * caller's knowledge bases first, so a missing or wrong key fails the connection with the 401
 * (and message) of gRPC instead of every later tool call.
 */
export async function handleMcpRequest(caller: TrellisClient, req: IncomingMessage, res: ServerResponse, query: URLSearchParams, version: string): Promise<void> {
  const body = req.method === 'POST' ? await readJsonBody(req) : undefined;
  const messages = Array.isArray(body) ? body : [body];
  if (messages.some((m) => (m as { method?: unknown } | undefined)?.method === 'initialize')) await caller.listKnowledgeBases();
  const server = createMcpServer(caller, { version, ...(query.get('kb') ? { knowledgeBase: query.get('kb')! } : {}) });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}
