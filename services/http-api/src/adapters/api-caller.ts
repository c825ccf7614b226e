import type { IncomingMessage } from 'node:http';
import type { ApiName, TrellisClient } from '@trellis/client';
import { ACTOR_HEADER } from '@trellis/grpc-edge';
import type { ApiServiceName } from './proto-json';

/**
 * The gRPC client acting as this HTTP caller: `Authorization: Bearer <key>` becomes the same
 * key in the gRPC `authorization` metadata, exactly as TrellisClient sends its own, so the
 * gRPC servers authenticate HTTP callers with the same rules and messages. Any other
 * Authorization scheme sends no key (and is refused the way a call without one is).
 */
export function callerOf(client: TrellisClient, req: IncomingMessage, options: { retryShed?: boolean } = {}): TrellisClient {
  const header = req.headers.authorization ?? '';
  const apiKey = header.startsWith('Bearer ') ? header.slice(7).trim() : undefined;
  const actor = req.headers[ACTOR_HEADER];
  return client.asCaller({ apiKey: apiKey === '' ? undefined : apiKey, actor: typeof actor === 'string' ? actor : undefined, ...options });
}

const API_OF_SERVICE: Record<ApiServiceName, ApiName> = {
  KnowledgeBaseService: 'knowledgeBases',
  GraphService: 'graph',
  RetrievalService: 'retrieval',
  ChatService: 'chat',
};

export function apiOf(service: ApiServiceName): ApiName {
  return API_OF_SERVICE[service];
}
