import { call, postEvents, uploadForm } from './http';
import type { ServerEvent } from './http';
import type {
  ChatMessage,
  ChatSummary,
  ChunkHit,
  ChunkingSettings,
  Entity,
  EntityDetail,
  ExtractionSettings,
  GraphEdit,
  IndexStatus,
  KnowledgeBase,
  Relationship,
  ResolutionSettings,
  SavedChatMessage,
  TrellisDocument,
} from './types';

/** The REST operations the console uses, one function each (paths as in /api/openapi.json). */

const kbPath = (kb: string) => `/api/v1/knowledge-bases/${encodeURIComponent(kb)}`;
const seg = encodeURIComponent;

export const listKnowledgeBases = async () => (await call<{ knowledgeBases: KnowledgeBase[] }>('/api/v1/knowledge-bases')).knowledgeBases;
export const getKnowledgeBase = (kb: string) => call<KnowledgeBase>(kbPath(kb));

export interface NewKnowledgeBase {
  name: string;
  description: string;
  chunking: Partial<ChunkingSettings>;
  models: { llmModel?: string };
}
export const createKnowledgeBase = (body: NewKnowledgeBase) => call<KnowledgeBase>('/api/v1/knowledge-bases', { method: 'POST', body });

export interface KnowledgeBaseChanges {
  description?: string;
  llmModel?: string;
  extraction?: ExtractionSettings;
  resolution?: ResolutionSettings;
}
export const updateKnowledgeBase = (kb: string, body: KnowledgeBaseChanges) => call<KnowledgeBase>(kbPath(kb), { method: 'PATCH', body });
export const deleteKnowledgeBase = (kb: string) => call<{ deleted: boolean }>(kbPath(kb), { method: 'DELETE' });
export const reindexKnowledgeBase = (kb: string) => call<{ documents: TrellisDocument[] }>(`${kbPath(kb)}/reindex`, { method: 'POST', body: {} });

export const listDocuments = (kb: string, pageToken: string, pageSize: number, status?: IndexStatus) =>
  call<{ documents: TrellisDocument[]; nextPageToken: string }>(`${kbPath(kb)}/documents`, { query: { pageSize, pageToken, status } });
export const getDocument = (kb: string, id: string) => call<TrellisDocument>(`${kbPath(kb)}/documents/${seg(id)}`);
export const deleteDocument = (kb: string, id: string) => call<{ deleted: boolean }>(`${kbPath(kb)}/documents/${seg(id)}`, { method: 'DELETE' });
export const reindexDocument = (kb: string, id: string) => call<TrellisDocument>(`${kbPath(kb)}/documents/${seg(id)}/reindex`, { method: 'POST', body: {} });
export const addDocumentFromUrl = (kb: string, url: string) => call<TrellisDocument>(`${kbPath(kb)}/documents/from-url`, { method: 'POST', body: { url }, timeoutMs: 120_000 });

export function uploadDocument(kb: string, file: File, onProgress: (fraction: number) => void): Promise<TrellisDocument> {
  const form = new FormData();
  form.set('metadata', JSON.stringify({ filename: file.name, sourceUri: file.name }));
  form.set('file', file, file.name);
  return uploadForm<TrellisDocument>(`${kbPath(kb)}/documents`, form, onProgress);
}

export const searchEntities = async (kb: string, query: string, limit = 20) => (await call<{ entities: Entity[] }>(`${kbPath(kb)}/entities`, { query: { query, limit } })).entities;
export const getEntity = (kb: string, entity: string) => call<EntityDetail>(`${kbPath(kb)}/entities/${seg(entity)}`);
export const updateEntity = (kb: string, id: string, changes: { name?: string; type?: string; description?: string }) =>
  call<Entity>(`${kbPath(kb)}/entities/${seg(id)}`, { method: 'PATCH', body: changes });
export const deleteEntity = (kb: string, id: string) => call<GraphEdit>(`${kbPath(kb)}/entities/${seg(id)}`, { method: 'DELETE' });
export const mergeEntities = (kb: string, sourceEntityId: string, targetEntityId: string) =>
  call<{ edit: GraphEdit; entity: Entity }>(`${kbPath(kb)}/entities/merge`, { method: 'POST', body: { sourceEntityId, targetEntityId } });
export const createSynopsis = (kb: string, name: string, description: string, entityIds: string[]) =>
  call<EntityDetail>(`${kbPath(kb)}/synopses`, { method: 'POST', body: { name, description, entityIds } });
export const updateRelationship = (kb: string, id: string, changes: { label?: string; description?: string; weight?: number }) =>
  call<Relationship>(`${kbPath(kb)}/relationships/${seg(id)}`, { method: 'PATCH', body: changes });
export const deleteRelationship = (kb: string, id: string) => call<GraphEdit>(`${kbPath(kb)}/relationships/${seg(id)}`, { method: 'DELETE' });
export const listGraphEdits = async (kb: string, limit = 50) => (await call<{ edits: GraphEdit[] }>(`${kbPath(kb)}/graph/edits`, { query: { limit } })).edits;
export const undoGraphEdit = (kb: string, editId: string) => call<GraphEdit>(`${kbPath(kb)}/graph/edits/${seg(editId)}/undo`, { method: 'POST', body: {} });

export interface ChunkQuery {
  query: string;
  mode?: string;
  topK?: number;
  documentIds?: string[];
  strategy?: string;
  additionalKnowledgeBases?: string[];
}
export const retrieveChunks = async (kb: string, request: ChunkQuery, signal?: AbortSignal) =>
  (await call<{ chunks: ChunkHit[] }>(`${kbPath(kb)}/retrieve/chunks`, { method: 'POST', body: request, timeoutMs: 60_000, ...(signal ? { signal } : {}) })).chunks;

/**
 * A document's chunks in order. The API has no chunk listing; vector retrieval restricted to the
 * one document ranks every chunk of it, so this asks for all of them (up to 1000) and sorts.
 */
export async function documentChunks(kb: string, documentId: string, hint: string): Promise<ChunkHit[]> {
  const chunks = await retrieveChunks(kb, { query: hint || 'document', mode: 'vector', topK: 1000, documentIds: [documentId] });
  return [...chunks].sort((a, b) => a.ordinal - b.ordinal);
}

export interface ChatTurnRequest {
  question: string;
  history?: ChatMessage[];
  topK?: number;
  /** The saved conversation this turn continues (the chat id of the previous answer). */
  chatId?: string;
}
/** Saved conversations, newest first. */
export const listChats = async () => (await call<{ chats: ChatSummary[] }>('/api/v1/chats', { query: { pageSize: 50 } })).chats;
export const getChat = (chatId: string) => call<{ chat: ChatSummary; messages: SavedChatMessage[] }>(`/api/v1/chats/${seg(chatId)}`);
export const deleteChat = (chatId: string) => call<{ deleted: boolean }>(`/api/v1/chats/${seg(chatId)}`, { method: 'DELETE' });
export const chatEvents = (kb: string, request: ChatTurnRequest, signal?: AbortSignal): AsyncGenerator<ServerEvent> => postEvents(`${kbPath(kb)}/chat`, request, signal);

/** A text passage uploaded as a document with the given source URI (the evaluation's passage id). */
export function uploadText(kb: string, filename: string, sourceUri: string, text: string, metadata: Record<string, string> = {}): Promise<TrellisDocument> {
  const form = new FormData();
  form.set('metadata', JSON.stringify({ filename, mimeType: 'text/plain', sourceUri, metadata }));
  form.set('file', new Blob([text], { type: 'text/plain' }), filename);
  return uploadForm<TrellisDocument>(`${kbPath(kb)}/documents`, form, () => undefined);
}

/** Every document of a knowledge base, all pages. */
export async function listAllDocuments(kb: string): Promise<TrellisDocument[]> {
  const all: TrellisDocument[] = [];
  let token = '';
  do {
    const page = await listDocuments(kb, token, 1000);
    all.push(...page.documents);
    token = page.nextPageToken;
  } while (token !== '');
  return all;
}

export interface ScoredRelationship {
  relationship: Relationship;
  score: number;
  hop: number;
}
export const retrieveGraph = (kb: string, query: string) =>
  call<{ entities: Entity[]; relationships: ScoredRelationship[]; rendered: string }>(`${kbPath(kb)}/retrieve/graph`, { method: 'POST', body: { query }, timeoutMs: 60_000 });
