import { deleteChat, getChat, listChats } from '../../api/trellis';
import type { KnowledgeBase, SavedChatMessage } from '../../api/types';
import { ErrorNotice } from '../../components/error-notice';
import { useAction, useAsync } from '../../components/use-async';

/** A saved conversation opened from the server: its knowledge base and its messages, oldest first. */
export interface OpenedChat {
  readonly chatId: string;
  readonly knowledgeBase: string;
  readonly messages: readonly SavedChatMessage[];
}

/**
 * The conversations the server saved (ListChats), newest first: open one to read it and go on
 * with it (its chat id continues it on the server), or delete it. `version` changes after
 * every answered turn, so a new conversation shows up without a reload.
 */
export function SavedChats({ knowledgeBases, version, onOpen }: { knowledgeBases: readonly KnowledgeBase[]; version: number; onOpen(chat: OpenedChat): void }) {
  const chats = useAsync(listChats, [version]);
  const action = useAction();
  const nameOf = (id: string) => knowledgeBases.find((kb) => kb.id === id)?.name ?? id;
  const open = (chatId: string) =>
    action.run(async () => {
      const { chat, messages } = await getChat(chatId);
      onOpen({ chatId, knowledgeBase: nameOf(chat.knowledgeBaseId), messages });
    });
  const remove = (chatId: string) =>
    action.run(async () => {
      await deleteChat(chatId);
      chats.reload();
    });
  return (
    <section aria-label="Saved conversations">
      <h2>Saved</h2>
      <ErrorNotice error={chats.error ?? action.error} context="Saved conversations" />
      {chats.data?.length === 0 ? <p className="muted">No saved conversation yet.</p> : null}
      <ul className="history">
        {(chats.data ?? []).map((c) => (
          <li key={c.id} className="actions">
            <button type="button" className="secondary grow" disabled={action.busy} onClick={() => void open(c.id)} title={`${nameOf(c.knowledgeBaseId)} · ${c.messageCount} messages · ${c.updatedAt}`}>
              {c.title.slice(0, 28) || c.id}
            </button>
            <button type="button" className="secondary" disabled={action.busy} aria-label={`delete conversation ${c.title.slice(0, 28)}`} onClick={() => void remove(c.id)}>
              ×
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
