import type { KbScope, TenantScope } from '@trellis/contracts';
import type { ChatMessageRecord, ChatRecord, ChatTurn } from '../records';
import type { ChatPage, ChatRepository } from '../repositories/chat.repository';
import { json, nullableText, num, rowMapper, text, time } from '../row-mappers';
import { SqlRepository } from './sql-engine';
import type { SqlValue } from './sql-session';

/** Characters of the first question a conversation is titled with. */
export const CHAT_TITLE_CHARS = 200;

const CHAT_COLUMNS = 'id, kb_id, title, engine, message_count, created_at, updated_at';

/**
 * Conversations (`chats`, one row each) and their messages (`chat_messages`, in insertion
 * order). A turn writes both in one transaction, so a listed conversation always has its messages.
 */
export class SqlChats extends SqlRepository implements ChatRepository {
  async saveChatTurn(scope: KbScope, turn: ChatTurn): Promise<void> {
    const d = this.dialect;
    const at = d.time(new Date().toISOString());
    const insert = 'INSERT INTO chat_messages (tenant_id, kb_id, chat_id, role, content, citations, created_at, condensed_question) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';
    const condensed = turn.condensedQuestion && turn.condensedQuestion !== turn.question ? turn.condensedQuestion : null;
    await this.db.transaction(async (tx) => {
      await tx.exec(
        `INSERT INTO chats (tenant_id, id, kb_id, title, engine, message_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 2, ?, ?)
         ${d.onConflictUpdate(`message_count = message_count + 2, updated_at = ${d.inserted('updated_at')}`)}`,
        [scope.tenantId, turn.chatId, scope.kbId, turn.question.slice(0, CHAT_TITLE_CHARS), turn.engine ?? '', at, at],
      );
      await tx.exec(insert, [scope.tenantId, scope.kbId, turn.chatId, 'user', turn.question, '[]', at, condensed]);
      await tx.exec(insert, [scope.tenantId, scope.kbId, turn.chatId, 'assistant', turn.answer, JSON.stringify(turn.citations), at, null]);
    });
  }

  async getChat(scope: TenantScope, chatId: string): Promise<ChatRecord | null> {
    const [row] = await this.db.rows(`SELECT ${CHAT_COLUMNS} FROM chats WHERE tenant_id = ? AND id = ?`, [scope.tenantId, chatId]);
    return row ? toChat(row) : null;
  }

  async listChats(scope: TenantScope, page: ChatPage): Promise<ChatRecord[]> {
    const where = ['tenant_id = ?'];
    const params: SqlValue[] = [scope.tenantId];
    if (page.kbId !== undefined) {
      where.push('kb_id = ?');
      params.push(page.kbId);
    }
    if (page.before !== undefined) {
      const at = this.dialect.time(page.before.createdAt);
      where.push('(created_at < ? OR (created_at = ? AND id < ?))');
      params.push(at, at, page.before.id);
    }
    const rows = await this.db.rows(`SELECT ${CHAT_COLUMNS} FROM chats WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${Math.max(1, Math.floor(page.limit))}`, params);
    return rows.map(toChat);
  }

  async listChatMessages(scope: TenantScope, chatId: string, last?: number): Promise<ChatMessageRecord[]> {
    const select = 'SELECT id, role, content, citations, condensed_question, created_at FROM chat_messages WHERE tenant_id = ? AND chat_id = ?';
    const rows =
      last === undefined
        ? await this.db.rows(`${select} ORDER BY id`, [scope.tenantId, chatId])
        : (await this.db.rows(`${select} ORDER BY id DESC LIMIT ${Math.max(0, Math.floor(last))}`, [scope.tenantId, chatId])).reverse();
    return rows.map(toChatMessage);
  }

  async deleteChat(scope: TenantScope, chatId: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await tx.exec('DELETE FROM chat_messages WHERE tenant_id = ? AND chat_id = ?', [scope.tenantId, chatId]);
      return (await tx.exec('DELETE FROM chats WHERE tenant_id = ? AND id = ?', [scope.tenantId, chatId])) > 0;
    });
  }
}

const toChat = rowMapper<ChatRecord>({ id: text, kbId: text, title: text, engine: text, messageCount: num, createdAt: time, updatedAt: time });

const toChatMessage = rowMapper<ChatMessageRecord>({
  role: (v) => (v === 'assistant' ? 'assistant' : 'user'),
  content: text,
  citations: json<unknown[]>(),
  condensedQuestion: (v) => nullableText(v) ?? '',
  createdAt: time,
});
