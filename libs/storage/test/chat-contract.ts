import { describe, expect, it } from 'vitest';
import { ErrorCode } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import type { ChatEngineSettings } from '../src/records';
import type { TrellisStore } from '../src/trellis-store';
import { TEST_KB_SETTINGS, eachStoreWithKnowledgeBase } from './store-contract';

/**
 * Conversations: turns saved under a chat id, listed newest first per tenant (and per knowledge
 * base), read back with their citations and condensed questions, bounded to the most recent
 * messages, deleted with their messages; another tenant sees none of it.
 */
export function describeChatContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: conversations`, () => {
    let store: TrellisStore;
    let scope: KbScope;
    const tenant = { tenantId: 't1' };

    eachStoreWithKnowledgeBase(makeStore, (s, k) => {
      store = s;
      scope = k;
    });

    const turn = (chatId: string, n: number, condensedQuestion?: string) =>
      store.repositories.chats.saveChatTurn(scope, { chatId, question: `question ${n}`, answer: `answer ${n} [1]`, citations: [{ index: 1, chunkId: `c${n}` }], condensedQuestion, engine: 'docs' });

    it('saves turns under one chat, reads them back in order with citations and condensed questions, and bounds them', async () => {
      await turn('chat-a', 1);
      await turn('chat-a', 2, 'question 2 (Marie Curie)');
      const chat = await store.repositories.chats.getChat(tenant, 'chat-a');
      expect(chat).toMatchObject({ id: 'chat-a', kbId: scope.kbId, title: 'question 1', engine: 'docs', messageCount: 4 });
      expect(chat!.updatedAt >= chat!.createdAt).toBe(true);
      const messages = await store.repositories.chats.listChatMessages(tenant, 'chat-a');
      expect(messages.map((m) => [m.role, m.content, m.condensedQuestion])).toEqual([
        ['user', 'question 1', ''],
        ['assistant', 'answer 1 [1]', ''],
        ['user', 'question 2', 'question 2 (Marie Curie)'],
        ['assistant', 'answer 2 [1]', ''],
      ]);
      expect(messages[3]!.citations).toEqual([{ index: 1, chunkId: 'c2' }]);
      expect(messages[0]!.citations).toEqual([]);
      expect((await store.repositories.chats.listChatMessages(tenant, 'chat-a', 3)).map((m) => m.content)).toEqual(['answer 1 [1]', 'question 2', 'answer 2 [1]']);
      expect(await store.repositories.chats.listChatMessages(tenant, 'chat-a', 0)).toEqual([]);
    });

    it('lists conversations newest first, a page at a time, per knowledge base, within the tenant only', async () => {
      const other = await store.repositories.knowledgeBases.createKnowledgeBase(tenant, { name: 'other', description: '', settings: TEST_KB_SETTINGS });
      for (const id of ['chat-1', 'chat-2', 'chat-3']) {
        await turn(id, 1);
        // Distinct creation times (millisecond precision on both engines).
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await store.repositories.chats.saveChatTurn({ tenantId: 't1', kbId: other.id }, { chatId: 'chat-other', question: 'q', answer: 'a', citations: [] });
      await store.repositories.chats.saveChatTurn({ tenantId: 't2', kbId: scope.kbId }, { chatId: 'chat-t2', question: 'q', answer: 'a', citations: [] });

      const all = await store.repositories.chats.listChats(tenant, { limit: 10 });
      expect(all.map((c) => c.id)).toEqual(['chat-other', 'chat-3', 'chat-2', 'chat-1']);
      const first = await store.repositories.chats.listChats(tenant, { limit: 2, kbId: scope.kbId });
      expect(first.map((c) => c.id)).toEqual(['chat-3', 'chat-2']);
      const second = await store.repositories.chats.listChats(tenant, { limit: 2, kbId: scope.kbId, before: { createdAt: first[1]!.createdAt, id: first[1]!.id } });
      expect(second.map((c) => c.id)).toEqual(['chat-1']);
      expect((await store.repositories.chats.listChats({ tenantId: 't2' }, { limit: 10 })).map((c) => c.id)).toEqual(['chat-t2']);
      expect(await store.repositories.chats.getChat({ tenantId: 't2' }, 'chat-1')).toBeNull();
      expect(await store.repositories.chats.listChatMessages({ tenantId: 't2' }, 'chat-1')).toEqual([]);
    });

    it('deletes a conversation with its messages, only within the tenant, and with its knowledge base', async () => {
      await turn('chat-a', 1);
      await turn('chat-b', 1);
      expect(await store.repositories.chats.deleteChat({ tenantId: 't2' }, 'chat-a')).toBe(false);
      expect(await store.repositories.chats.getChat(tenant, 'chat-a')).not.toBeNull();
      expect(await store.repositories.chats.deleteChat(tenant, 'chat-a')).toBe(true);
      expect(await store.repositories.chats.getChat(tenant, 'chat-a')).toBeNull();
      expect(await store.repositories.chats.listChatMessages(tenant, 'chat-a')).toEqual([]);
      expect(await store.repositories.chats.deleteChat(tenant, 'chat-a')).toBe(false);
      expect((await store.repositories.chats.listChats(tenant, { limit: 10 })).map((c) => c.id)).toEqual(['chat-b']);
      await store.repositories.knowledgeBases.deleteKnowledgeBase(scope);
      expect(await store.repositories.chats.listChats(tenant, { limit: 10 })).toEqual([]);
      expect(await store.repositories.chats.listChatMessages(tenant, 'chat-b')).toEqual([]);
    });
  
    const SETTINGS: ChatEngineSettings = {
      knowledgeBases: ['kb'],
      mode: 'vector',
      topK: 2,
      depth: 1,
      strategy: '',
      scope: '',
      systemPrompt: 'Answer like a librarian.',
      refinePrompt: '',
      condensePrompt: '',
      answerPrompt: 'One sentence.',
      showGraphContext: true,
    };

    it('creates, reads, lists, updates and deletes chat engines by name, per tenant', async () => {
      const created = await store.repositories.chatEngines.createChatEngine(tenant, { name: 'docs', description: 'for the docs', settings: SETTINGS });
      expect(created).toMatchObject({ name: 'docs', description: 'for the docs', settings: SETTINGS });
      await expect(store.repositories.chatEngines.createChatEngine(tenant, { name: 'docs', description: '', settings: SETTINGS })).rejects.toMatchObject({ code: ErrorCode.AlreadyExists });
      await store.repositories.chatEngines.createChatEngine(tenant, { name: 'api', description: '', settings: { ...SETTINGS, mode: 'hybrid' } });
      await store.repositories.chatEngines.createChatEngine({ tenantId: 't2' }, { name: 'docs', description: 'theirs', settings: { ...SETTINGS, topK: 9 } });

      expect(await store.repositories.chatEngines.getChatEngine(tenant, 'docs')).toMatchObject({ name: 'docs', description: 'for the docs', settings: SETTINGS, createdAt: created.createdAt });
      expect((await store.repositories.chatEngines.listChatEngines(tenant)).map((e) => e.name)).toEqual(['api', 'docs']);
      expect((await store.repositories.chatEngines.getChatEngine({ tenantId: 't2' }, 'docs'))?.settings.topK).toBe(9);
      expect(await store.repositories.chatEngines.getChatEngine(tenant, 'nope')).toBeNull();

      const updated = await store.repositories.chatEngines.updateChatEngine(tenant, 'docs', { description: 'changed', settings: { ...SETTINGS, topK: 3 } });
      expect(updated).toMatchObject({ name: 'docs', description: 'changed', settings: { topK: 3, mode: 'vector' } });
      expect(updated!.updatedAt >= created.updatedAt).toBe(true);
      expect(await store.repositories.chatEngines.updateChatEngine(tenant, 'nope', { description: '', settings: SETTINGS })).toBeNull();
      expect((await store.repositories.chatEngines.getChatEngine({ tenantId: 't2' }, 'docs'))?.description).toBe('theirs');

      expect(await store.repositories.chatEngines.deleteChatEngine({ tenantId: 't2' }, 'api')).toBe(false);
      expect(await store.repositories.chatEngines.deleteChatEngine(tenant, 'docs')).toBe(true);
      expect(await store.repositories.chatEngines.deleteChatEngine(tenant, 'docs')).toBe(false);
      expect((await store.repositories.chatEngines.listChatEngines(tenant)).map((e) => e.name)).toEqual(['api']);
      expect((await store.repositories.chatEngines.listChatEngines({ tenantId: 't2' })).map((e) => e.name)).toEqual(['docs']);
    });
  });
}
