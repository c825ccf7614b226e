import { TrellisError } from '@trellis/contracts';
import type { TenantScope, v1 } from '@trellis/contracts';
import type { ChatMessageRecord, ChatRecord, ChatRepository, KnowledgeBaseRepository } from '@trellis/storage';
import { boundHistory } from './history-bounds';
import type { HistoryBounds } from './history-bounds';

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 500;
export const MAX_CHAT_ID_CHARS = 128;

/**
 * Saved conversations of a tenant: listed, read and deleted over the API, and read back as the
 * bounded history of a follow-up turn. Another tenant's chat id is not found, as an unknown one.
 */
export class Conversations {
  constructor(
    private readonly repos: { readonly chats: ChatRepository; readonly knowledgeBases: Pick<KnowledgeBaseRepository, 'findKnowledgeBase'> },
    private readonly bounds: HistoryBounds,
  ) {}

  async list(tenant: TenantScope, request: v1.ListChatsRequest): Promise<v1.ListChatsResponse> {
    if (request.pageSize > MAX_PAGE_SIZE) throw TrellisError.invalid(`page_size must be at most ${MAX_PAGE_SIZE}`);
    const limit = request.pageSize || DEFAULT_PAGE_SIZE;
    let kbId: string | undefined;
    if (request.knowledgeBase !== '') {
      const kb = await this.repos.knowledgeBases.findKnowledgeBase(tenant, request.knowledgeBase);
      if (kb === null) throw TrellisError.notFound(`knowledge base "${request.knowledgeBase}" not found`);
      kbId = kb.id;
    }
    const before = cursorOf(request.pageToken);
    const found = await this.repos.chats.listChats(tenant, { limit: limit + 1, ...(kbId === undefined ? {} : { kbId }), ...(before === undefined ? {} : { before }) });
    const page = found.slice(0, limit);
    const last = page.at(-1);
    return { chats: page.map(toSummary), nextPageToken: found.length > limit && last ? tokenOf(last) : '' };
  }

  async get(tenant: TenantScope, chatId: string): Promise<v1.ChatDetail> {
    const chat = await this.find(tenant, chatId);
    const messages = await this.repos.chats.listChatMessages(tenant, chat.id);
    return { chat: toSummary(chat), messages: messages.map(toSavedMessage) };
  }

  async delete(tenant: TenantScope, chatId: string): Promise<v1.DeleteChatResponse> {
    validChatId(chatId);
    if (!(await this.repos.chats.deleteChat(tenant, chatId))) throw notFound(chatId);
    return { deleted: true };
  }

  /**
   * The conversation a follow-up continues, and its most recent turns within the bounds; a
   * question reads as it was condensed (what it meant), so the next follow-up inherits its names.
   */
  async continued(tenant: TenantScope, chatId: string, knowledgeBase = ''): Promise<{ chat: ChatRecord; history: v1.ChatMessage[] }> {
    const chat = await this.find(tenant, chatId);
    if (knowledgeBase !== '' && knowledgeBase !== chat.kbId) {
      const named = await this.repos.knowledgeBases.findKnowledgeBase(tenant, knowledgeBase);
      if (named === null) throw TrellisError.notFound(`knowledge base "${knowledgeBase}" not found`);
      if (named.id !== chat.kbId) throw TrellisError.invalid(`chat "${chatId}" belongs to another knowledge base than "${knowledgeBase}": leave knowledge_base empty to continue it`);
    }
    const messages = await this.repos.chats.listChatMessages(tenant, chat.id, this.bounds.turns * 2);
    return { chat, history: this.bound(messages.map((m) => ({ role: m.role, content: m.condensedQuestion || m.content }))) };
  }

  /** Any history within the bounds (the request's own, after the saved one). */
  bound(history: readonly v1.ChatMessage[]): v1.ChatMessage[] {
    return boundHistory(history, this.bounds);
  }

  private async find(tenant: TenantScope, chatId: string): Promise<ChatRecord> {
    validChatId(chatId);
    const chat = await this.repos.chats.getChat(tenant, chatId);
    if (chat === null) throw notFound(chatId);
    return chat;
  }
}

function validChatId(chatId: string): void {
  if (chatId === '') throw TrellisError.invalid('chat_id is empty');
  if (chatId.length > MAX_CHAT_ID_CHARS) throw TrellisError.invalid(`chat_id is longer than ${MAX_CHAT_ID_CHARS} characters`);
}

function notFound(chatId: string): TrellisError {
  return TrellisError.notFound(`chat "${chatId}" not found`);
}

function toSummary(chat: ChatRecord): v1.ChatSummary {
  return {
    id: chat.id,
    knowledgeBaseId: chat.kbId,
    title: chat.title,
    engine: chat.engine,
    messageCount: chat.messageCount,
    createdAt: chat.createdAt,
    updatedAt: chat.updatedAt,
  };
}

function toSavedMessage(m: ChatMessageRecord): v1.SavedChatMessage {
  return { role: m.role, content: m.content, citations: m.citations as v1.Citation[], condensedQuestion: m.condensedQuestion, createdAt: m.createdAt };
}

/** The page token: the last conversation of the page (its creation time and id), base64url JSON. */
function tokenOf(chat: ChatRecord): string {
  return Buffer.from(JSON.stringify([chat.createdAt, chat.id]), 'utf8').toString('base64url');
}

function cursorOf(pageToken: string): { createdAt: string; id: string } | undefined {
  if (pageToken === '') return undefined;
  const invalid = () => TrellisError.invalid('page_token is not one a ListChats response gave');
  if (!/^[A-Za-z0-9_-]{1,700}$/.test(pageToken)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(pageToken, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw invalid();
  const [createdAt, id] = parsed as unknown[];
  if (typeof createdAt !== 'string' || typeof id !== 'string' || Number.isNaN(Date.parse(createdAt)) || id === '' || id.length > MAX_CHAT_ID_CHARS) throw invalid();
  return { createdAt, id };
}
