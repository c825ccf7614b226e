import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TrellisClient } from '@trellis/client';
import { httpError } from '../http-status';
import { HttpFailure, readJsonBody } from '../request-body';
import { completion, parseCompletionRequest, streamedCompletion } from './chat-completions';

function modelOf(kb: { name: string; createdAt: string }) {
  const created = Date.parse(kb.createdAt);
  return { id: kb.name, object: 'model', created: Number.isFinite(created) ? Math.floor(created / 1000) : 0, owned_by: 'trellis' };
}

/**
 * The OpenAI-compatible endpoint under /v1: each knowledge base the caller's key can see is a
 * model named after it. Errors are thrown as HttpFailure or gRPC errors and written by the
 * caller in OpenAI's error shape.
 */
export async function handleOpenAi(caller: TrellisClient, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  if (path === '/v1/models' && req.method === 'GET') {
    const { knowledgeBases } = await caller.listKnowledgeBases();
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ object: 'list', data: knowledgeBases.map(modelOf) }));
    return;
  }
  const model = /^\/v1\/models\/([^/]+)$/.exec(path)?.[1];
  if (model !== undefined && req.method === 'GET') {
    let name: string;
    try {
      name = decodeURIComponent(model);
    } catch {
      throw new HttpFailure(httpError(400, `the model name in ${path} is not valid percent-encoding`, { field: 'model' }));
    }
    const kb = await caller.getKnowledgeBase(name);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(modelOf(kb)));
    return;
  }
  if (path === '/v1/chat/completions') {
    if (req.method !== 'POST') throw new HttpFailure(httpError(405, 'use POST /v1/chat/completions'));
    const request = parseCompletionRequest(await readJsonBody(req));
    return request.stream ? streamedCompletion(caller, request, res) : completion(caller, request, res);
  }
  throw new HttpFailure(httpError(404, `no OpenAI-compatible endpoint ${req.method ?? ''} ${path}; served: GET /v1/models, GET /v1/models/{model}, POST /v1/chat/completions`));
}
