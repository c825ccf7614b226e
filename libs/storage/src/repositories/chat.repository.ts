import type { KbScope, TenantScope } from '@trellis/contracts';
import type { ChatMessageRecord, ChatRecord, ChatTurn } from '../records';

/** Which conversations ListChats returns: newest first, a page at a time. */
export interface ChatPage {
  /** Conversations at most. */
  readonly limit: number;
  /** Only those begun in this knowledge base. */
  readonly kbId?: string;
  /** Only those older than this one: the last of the previous page. */
  readonly before?: { readonly createdAt: string; readonly id: string };
}

/**
 * Chat history: conversations of a tenant and their questions and answers with citations. A
 * chat id is unique per tenant; another tenant's id is not found.
 */
export interface ChatRepository {
  /** Adds a question and its answer, starting the conversation when it is new. */
  saveChatTurn(scope: KbScope, turn: ChatTurn): Promise<void>;
  getChat(scope: TenantScope, chatId: string): Promise<ChatRecord | null>;
  listChats(scope: TenantScope, page: ChatPage): Promise<ChatRecord[]>;
  /** The conversation's messages, oldest first; with `last`, only the most recent `last`. */
  listChatMessages(scope: TenantScope, chatId: string, last?: number): Promise<ChatMessageRecord[]>;
  /** Removes the conversation and its messages; false when there was none. */
  deleteChat(scope: TenantScope, chatId: string): Promise<boolean>;
}
