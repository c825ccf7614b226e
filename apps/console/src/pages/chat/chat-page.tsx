import { useRef, useState } from 'react';
import type { FormEvent } from 'react';
import type { ChatMessage } from '../../api/types';
import { ErrorNotice } from '../../components/error-notice';
import { useKnowledgeBases } from '../../components/knowledge-bases';
import { AnswerView } from './answer-view';
import { ChunkViewer } from './chunk-viewer';
import type { OpenChunk } from './chunk-viewer';
import { emptyAnswer, streamAnswer } from './chat-stream';
import type { StreamedAnswer } from './chat-stream';
import { SavedChats } from './saved-chats';
import type { OpenedChat } from './saved-chats';

interface Turn {
  readonly question: string;
  readonly answers: readonly StreamedAnswer[];
}

interface Conversation {
  readonly id: number;
  readonly turns: readonly Turn[];
}

/** The saved chat of a conversation on one knowledge base: the chat id its last answer carried. */
function chatIdFor(conversation: Conversation, knowledgeBase: string): string | undefined {
  return conversation.turns.map((t) => t.answers.find((a) => a.knowledgeBase === knowledgeBase)?.done?.chatId).filter(Boolean).at(-1);
}

/** Earlier turns of a conversation as one knowledge base saw them, for the next question's history. */
function historyFor(conversation: Conversation, knowledgeBase: string): ChatMessage[] {
  return conversation.turns.flatMap((t) => {
    const answer = t.answers.find((a) => a.knowledgeBase === knowledgeBase);
    return answer?.done ? [{ role: 'user' as const, content: t.question }, { role: 'assistant' as const, content: answer.done.text }] : [];
  });
}

/** A saved conversation as the turns of this page: each question with the answer saved after it. */
function turnsOf(chat: OpenedChat): Turn[] {
  const turns: Turn[] = [];
  chat.messages.forEach((m, i) => {
    const reply = chat.messages[i + 1];
    if (m.role !== 'user' || reply?.role !== 'assistant') return;
    const done = { chatId: chat.chatId, text: reply.content, citations: reply.citations, condensedQuestion: m.condensedQuestion, refinedQuestion: '', route: '', routeReason: '' };
    turns.push({ question: m.content, answers: [{ ...emptyAnswer(chat.knowledgeBase), text: reply.content, citations: reply.citations, done }] });
  });
  return turns;
}

/** Chat: one question to one or more knowledge bases, each answer streamed with stages and citations. */
export function ChatPage() {
  const { list, selected } = useKnowledgeBases();
  const [chosen, setChosen] = useState<string[]>([]);
  const [question, setQuestion] = useState('');
  const [conversations, setConversations] = useState<Conversation[]>([{ id: 1, turns: [] }]);
  const [currentId, setCurrentId] = useState(1);
  const [open, setOpen] = useState<OpenChunk>();
  const [busy, setBusy] = useState(false);
  const [answered, setAnswered] = useState(0);
  const abort = useRef<AbortController>(undefined);
  const kbs = chosen.length > 0 ? chosen : selected ? [selected] : [];
  const current = conversations.find((c) => c.id === currentId) ?? conversations[0]!;

  const updateTurn = (conversationId: number, turnIndex: number, answer: StreamedAnswer) =>
    setConversations((all) =>
      all.map((c) => (c.id !== conversationId ? c : { ...c, turns: c.turns.map((t, i) => (i !== turnIndex ? t : { ...t, answers: t.answers.map((a) => (a.knowledgeBase === answer.knowledgeBase ? answer : a)) })) })),
    );

  const ask = async (e: FormEvent) => {
    e.preventDefault();
    const text = question.trim();
    if (text === '' || kbs.length === 0 || busy) return;
    const conversation = current;
    const turnIndex = conversation.turns.length;
    setConversations((all) => all.map((c) => (c.id === conversation.id ? { ...c, turns: [...c.turns, { question: text, answers: kbs.map(emptyAnswer) }] } : c)));
    setQuestion('');
    setBusy(true);
    abort.current = new AbortController();
    const signal = abort.current.signal;
    await Promise.all(
      kbs.map((kb) => {
        const chatId = chatIdFor(conversation, kb);
        // A saved chat brings its own history on the server; only a chat not saved yet sends the page's.
        return streamAnswer(kb, { question: text, ...(chatId ? { chatId } : { history: historyFor(conversation, kb) }) }, (a) => updateTurn(conversation.id, turnIndex, a), signal);
      }),
    );
    setBusy(false);
    setAnswered((n) => n + 1);
  };

  const openSaved = (chat: OpenedChat) => {
    const id = Math.max(...conversations.map((c) => c.id)) + 1;
    setConversations((all) => [...all, { id, turns: turnsOf(chat) }]);
    setCurrentId(id);
    setChosen([chat.knowledgeBase]);
    setOpen(undefined);
  };

  const newConversation = () => {
    const id = Math.max(...conversations.map((c) => c.id)) + 1;
    setConversations((all) => [...all, { id, turns: [] }]);
    setCurrentId(id);
    setOpen(undefined);
  };

  const toggle = (name: string, on: boolean) => setChosen((names) => (on ? [...new Set([...(names.length ? names : kbs), name])] : (names.length ? names : kbs).filter((n) => n !== name)));

  return (
    <div className="row">
      <aside className="card" style={{ flex: '0 0 15rem' }}>
        <h2 style={{ marginTop: 0 }}>Conversations</h2>
        <ul className="history">
          {conversations.map((c) => (
            <li key={c.id}>
              <button type="button" className={c.id === current.id ? '' : 'secondary'} onClick={() => setCurrentId(c.id)} aria-pressed={c.id === current.id}>
                {c.turns[0]?.question.slice(0, 28) ?? 'New conversation'}
              </button>
            </li>
          ))}
        </ul>
        <div className="actions">
          <button type="button" className="secondary" onClick={newConversation}>
            New conversation
          </button>
        </div>
        <p className="muted">Each answered conversation is saved on the server too:</p>
        <SavedChats knowledgeBases={list.data ?? []} version={answered} onOpen={openSaved} />
        <h2>Knowledge bases</h2>
        <ErrorNotice error={list.error} context="Knowledge bases" />
        {list.data?.length === 0 ? <p className="muted">None yet: create one on the Knowledge bases page.</p> : null}
        <fieldset style={{ border: 0, padding: 0, margin: 0 }}>
          <legend className="muted">Ask</legend>
          {(list.data ?? []).map((kb) => (
            <label key={kb.id}>
              <input type="checkbox" checked={kbs.includes(kb.name)} onChange={(e) => toggle(kb.name, e.target.checked)} /> {kb.name}
            </label>
          ))}
        </fieldset>
      </aside>
      <section className="grow">
        <h1>Chat</h1>
        {current.turns.length === 0 ? <p className="muted">Ask a question about the documents of the knowledge bases ticked on the left.</p> : null}
        {current.turns.map((turn, i) => (
          <div key={i}>
            <p>
              <strong>You:</strong> {turn.question}
            </p>
            <div className="columns">
              {turn.answers.map((a) => (
                <AnswerView key={a.knowledgeBase} question={turn.question} answer={a} onOpenCitation={(c) => setOpen({ knowledgeBase: a.knowledgeBase, documentId: c.documentId, chunkId: c.chunkId, snippet: c.snippet })} />
              ))}
            </div>
          </div>
        ))}
        <form className="actions" onSubmit={ask}>
          <label htmlFor="question" className="grow" style={{ flex: 1 }}>
            Question
            <input id="question" style={{ width: '100%' }} value={question} onChange={(e) => setQuestion(e.target.value)} placeholder="Who discovered piezoelectricity?" autoFocus />
          </label>
          <button type="submit" disabled={busy || kbs.length === 0 || question.trim() === ''}>
            {busy ? 'Answering…' : 'Send'}
          </button>
          {busy ? (
            <button type="button" className="secondary" onClick={() => abort.current?.abort()}>
              Stop
            </button>
          ) : null}
        </form>
        {open ? <ChunkViewer chunk={open} onClose={() => setOpen(undefined)} /> : null}
      </section>
    </div>
  );
}
