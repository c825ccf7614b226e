import type { ApiServiceName } from './proto-json';

/** How a route runs: one unary call, a streamed upload, a streamed chat or site crawl, or a polled progress stream. */
export type RouteKind = 'unary' | 'upload' | 'chat-stream' | 'site-stream' | 'document-events' | 'knowledge-base-events';

/**
 * One REST operation. The route table below is the single source of the router and of the
 * OpenAPI document: paths, methods, which gRPC method each calls, and where request fields
 * come from (path, then the query string for GET/DELETE or a JSON body otherwise).
 */
export interface RestRoute {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** `{name}` segments are path parameters; each fills the request field of the same name unless `pathFields` says otherwise. */
  readonly path: string;
  readonly service: ApiServiceName;
  /** The gRPC method called (polled, for the event streams). */
  readonly rpc: string;
  readonly kind: RouteKind;
  readonly summary: string;
  /** 201 for operations that create a resource. */
  readonly successStatus?: 200 | 201;
  /** Path parameter → request field, where their names differ. */
  readonly pathFields?: Readonly<Record<string, string>>;
}

const KB = '/api/v1/knowledge-bases/{knowledgeBase}';

export const REST_ROUTES: readonly RestRoute[] = [
  { method: 'POST', path: '/api/v1/knowledge-bases', service: 'KnowledgeBaseService', rpc: 'CreateKnowledgeBase', kind: 'unary', successStatus: 201, summary: 'Create a knowledge base' },
  { method: 'GET', path: '/api/v1/knowledge-bases', service: 'KnowledgeBaseService', rpc: 'ListKnowledgeBases', kind: 'unary', summary: "List the caller's knowledge bases" },
  { method: 'GET', path: KB, service: 'KnowledgeBaseService', rpc: 'GetKnowledgeBase', kind: 'unary', summary: 'Get a knowledge base' },
  { method: 'PATCH', path: KB, service: 'KnowledgeBaseService', rpc: 'UpdateKnowledgeBase', kind: 'unary', summary: "Change a knowledge base's description, model or settings" },
  { method: 'DELETE', path: KB, service: 'KnowledgeBaseService', rpc: 'DeleteKnowledgeBase', kind: 'unary', summary: 'Delete a knowledge base and everything in it' },
  { method: 'POST', path: `${KB}/documents`, service: 'KnowledgeBaseService', rpc: 'UploadDocument', kind: 'upload', successStatus: 201, summary: 'Upload a document (multipart/form-data: `file`, optional `metadata` JSON)' },
  { method: 'POST', path: `${KB}/documents/from-url`, service: 'KnowledgeBaseService', rpc: 'AddDocumentFromUrl', kind: 'unary', successStatus: 201, summary: 'Add a document fetched from a URL' },
  { method: 'POST', path: `${KB}/sites`, service: 'KnowledgeBaseService', rpc: 'AddSite', kind: 'site-stream', summary: 'Server-sent events: add the pages of a sitemap or a crawl, one `page` event per page' },
  { method: 'GET', path: `${KB}/documents`, service: 'KnowledgeBaseService', rpc: 'ListDocuments', kind: 'unary', summary: 'List documents with their index status' },
  { method: 'GET', path: `${KB}/documents/{documentId}`, service: 'KnowledgeBaseService', rpc: 'GetDocument', kind: 'unary', summary: 'Get a document and its index status' },
  {
    method: 'POST',
    path: `${KB}/indexing-progress`,
    service: 'KnowledgeBaseService',
    rpc: 'GetIndexingProgress',
    kind: 'unary',
    summary: 'Status, error and chunk counts of up to 1,000 documents (JSON body: `documentIds`), cheap enough to poll while they index',
  },
  { method: 'DELETE', path: `${KB}/documents/{documentId}`, service: 'KnowledgeBaseService', rpc: 'DeleteDocument', kind: 'unary', summary: 'Delete a document, leaving nothing of it behind' },
  { method: 'POST', path: `${KB}/documents/{documentId}/reindex`, service: 'KnowledgeBaseService', rpc: 'ReindexDocument', kind: 'unary', summary: 'Index a document again' },
  { method: 'POST', path: `${KB}/reindex`, service: 'KnowledgeBaseService', rpc: 'ReindexKnowledgeBase', kind: 'unary', summary: 'Index every document again' },
  {
    method: 'POST',
    path: `${KB}/estimate`,
    service: 'KnowledgeBaseService',
    rpc: 'EstimateIngest',
    kind: 'unary',
    summary: 'What ingesting files would cost in chunks, tokens and dollars (JSON body: `files` with base64 `data`); nothing is stored or sent to a model',
  },
  {
    method: 'GET',
    path: `${KB}/documents/{documentId}/events`,
    service: 'KnowledgeBaseService',
    rpc: 'GetDocument',
    kind: 'document-events',
    summary: "Server-sent events: the document each time its status or stage changes (polls GetDocument), until it is graphed or failed",
  },
  {
    method: 'GET',
    path: `${KB}/events`,
    service: 'KnowledgeBaseService',
    rpc: 'ListDocuments',
    kind: 'knowledge-base-events',
    summary: 'Server-sent events: each document of the knowledge base whenever it changes (polls ListDocuments), until the client leaves',
  },

  { method: 'GET', path: `${KB}/entities`, service: 'GraphService', rpc: 'SearchEntities', kind: 'unary', summary: 'Search entities by name' },
  { method: 'GET', path: `${KB}/entities/{entityId}`, service: 'GraphService', rpc: 'GetEntity', kind: 'unary', pathFields: { entityId: 'entity' }, summary: 'Get an entity (by id or name) with its relationships and neighbours' },
  { method: 'PATCH', path: `${KB}/entities/{entityId}`, service: 'GraphService', rpc: 'UpdateEntity', kind: 'unary', summary: "Rename an entity or change its type or description" },
  { method: 'DELETE', path: `${KB}/entities/{entityId}`, service: 'GraphService', rpc: 'DeleteEntity', kind: 'unary', summary: 'Delete an entity' },
  { method: 'POST', path: `${KB}/entities/merge`, service: 'GraphService', rpc: 'MergeEntities', kind: 'unary', summary: 'Merge the source entity into the target entity' },
  { method: 'POST', path: `${KB}/synopses`, service: 'GraphService', rpc: 'CreateSynopsis', kind: 'unary', successStatus: 201, summary: 'Create a synopsis entity over several entities' },
  { method: 'PATCH', path: `${KB}/relationships/{relationshipId}`, service: 'GraphService', rpc: 'UpdateRelationship', kind: 'unary', summary: "Change a relationship's label, description or weight" },
  { method: 'DELETE', path: `${KB}/relationships/{relationshipId}`, service: 'GraphService', rpc: 'DeleteRelationship', kind: 'unary', summary: 'Delete a relationship' },
  { method: 'GET', path: `${KB}/graph`, service: 'GraphService', rpc: 'ExportGraph', kind: 'unary', summary: 'Export the whole graph' },
  { method: 'POST', path: `${KB}/graph/subgraph`, service: 'GraphService', rpc: 'GetSubgraph', kind: 'unary', summary: 'The neighbourhood of some entities' },
  { method: 'GET', path: `${KB}/graph/edits`, service: 'GraphService', rpc: 'ListGraphEdits', kind: 'unary', summary: 'The graph edit log, newest first' },
  { method: 'POST', path: `${KB}/graph/edits/{editId}/undo`, service: 'GraphService', rpc: 'UndoGraphEdit', kind: 'unary', summary: 'Undo a graph edit' },
  { method: 'GET', path: `${KB}/communities`, service: 'GraphService', rpc: 'ListCommunities', kind: 'unary', summary: 'The communities of the entity graph, every level' },
  { method: 'GET', path: `${KB}/communities/{communityId}`, service: 'GraphService', rpc: 'GetCommunity', kind: 'unary', summary: "A community's report: title, summary, key facts and members" },
  { method: 'POST', path: `${KB}/communities/rebuild`, service: 'GraphService', rpc: 'RebuildCommunities', kind: 'unary', summary: 'Build the communities again (all, or only what changed with incremental)' },

  { method: 'POST', path: `${KB}/retrieve`, service: 'RetrievalService', rpc: 'Retrieve', kind: 'unary', summary: 'Graph context, refined question and chunks in one call' },
  { method: 'POST', path: `${KB}/retrieve/chunks`, service: 'RetrievalService', rpc: 'RetrieveChunks', kind: 'unary', summary: 'Retrieve chunks (vector, full text or hybrid)' },
  { method: 'POST', path: `${KB}/retrieve/graph`, service: 'RetrievalService', rpc: 'RetrieveGraph', kind: 'unary', summary: 'Retrieve graph context for a question' },

  { method: 'POST', path: `${KB}/chat`, service: 'ChatService', rpc: 'Chat', kind: 'chat-stream', summary: 'Server-sent events: a streamed, cited answer (stage, token, citation and done events)' },
  { method: 'POST', path: `${KB}/ask`, service: 'ChatService', rpc: 'Ask', kind: 'unary', summary: 'A cited answer in one response' },
  { method: 'GET', path: '/api/v1/chats', service: 'ChatService', rpc: 'ListChats', kind: 'unary', summary: 'Saved conversations, newest first (optionally of one knowledge base)' },
  { method: 'GET', path: '/api/v1/chats/{chatId}', service: 'ChatService', rpc: 'GetChat', kind: 'unary', summary: 'A conversation with its messages and their citations' },
  { method: 'DELETE', path: '/api/v1/chats/{chatId}', service: 'ChatService', rpc: 'DeleteChat', kind: 'unary', summary: 'Delete a conversation and its messages' },
  { method: 'POST', path: '/api/v1/chat-engines', service: 'ChatService', rpc: 'CreateChatEngine', kind: 'unary', successStatus: 201, summary: 'Create a chat engine (a named chat configuration)' },
  { method: 'GET', path: '/api/v1/chat-engines', service: 'ChatService', rpc: 'ListChatEngines', kind: 'unary', summary: 'The chat engines, by name' },
  { method: 'GET', path: '/api/v1/chat-engines/{name}', service: 'ChatService', rpc: 'GetChatEngine', kind: 'unary', summary: 'Get a chat engine' },
  { method: 'PATCH', path: '/api/v1/chat-engines/{name}', service: 'ChatService', rpc: 'UpdateChatEngine', kind: 'unary', summary: "Replace a chat engine's settings" },
  { method: 'DELETE', path: '/api/v1/chat-engines/{name}', service: 'ChatService', rpc: 'DeleteChatEngine', kind: 'unary', summary: 'Delete a chat engine' },
];

/** The request field a path parameter fills. */
export function pathField(route: RestRoute, parameter: string): string {
  return route.pathFields?.[parameter] ?? parameter;
}

export function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}
