import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { TrellisClient } from '@trellis/client';
import { startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { chatTurn, grpcCode, trellis, uploadExamples, waitUntilIndexed } from './helpers';

const KEYS = 'key-of-a=tenant-a,key-of-b=tenant-b';

/**
 * Saved conversations and chat engines on the standalone server without a language model:
 * a follow-up continued by chat_id is condensed with the previous turn's names (deterministic
 * rewrite) and retrieval runs on the condensed question; conversations are listed, read and
 * deleted, per tenant; chat engines are created, selected per request (changing the answer's
 * sources and graph context), edited and deleted over gRPC, the CLI and REST.
 */
describe('standalone end to end: conversations and chat engines', () => {
  let server: StandaloneProcess;
  let a: TrellisClient;
  let b: TrellisClient;
  const kb = 'curie';
  const cli = (...args: string[]) => trellis(['--server', server.grpcAddress, '--api-key', 'key-of-a', ...args]);

  beforeAll(async () => {
    server = await startStandaloneProcess({ env: { TRELLIS_API_KEYS: KEYS, TRELLIS_EMBEDDINGS: 'hash' } });
    a = new TrellisClient({ address: server.grpcAddress, apiKey: 'key-of-a' });
    b = new TrellisClient({ address: server.grpcAddress, apiKey: 'key-of-b' });
    await a.createKnowledgeBase({ name: kb });
    await a.createKnowledgeBase({ name: 'empty' });
    const documents = await uploadExamples(a, kb);
    await waitUntilIndexed(a, kb, documents.map((d) => d.id), 120_000);
  }, 180_000);

  afterAll(async () => {
    a?.close();
    b?.close();
    await server?.dispose();
  });

  let chatId = '';

  it('continues a conversation by chat_id: the follow-up is condensed with the earlier names, and retrieval uses the condensed question', async () => {
    const first = await chatTurn(a, { knowledgeBase: kb, question: 'Who founded the Radium Institute?' });
    expect(first.stages.has('condensation')).toBe(false);
    expect(first.done.condensedQuestion).toBe('Who founded the Radium Institute?');
    chatId = first.done.chatId;
    expect(chatId).toMatch(/^[0-9a-f-]{36}$/);

    // No knowledge base named: the conversation's own.
    const second = await chatTurn(a, { question: 'When was it founded?', chatId });
    expect(second.done.chatId).toBe(chatId);
    expect(second.done.condensedQuestion).toMatch(/^When was it founded\? \(.*Radium Institute.*\)$/);
    expect(second.stages.get('condensation')).toBe(second.done.condensedQuestion);
    // The refined question retrieval ranked chunks with starts from the condensed one.
    expect(second.stages.get('chunk_retrieval')!.startsWith(second.done.condensedQuestion)).toBe(true);
    expect(second.done.citations.map((c) => c.sourceUri)).toContain('examples/radium-institute.txt');
    expect(second.done.text).toMatch(/1909/);

    // The next follow-up reads the condensed question of the one before: the name carries on.
    const third = await chatTurn(a, { question: 'Who directed its Curie laboratory?', chatId });
    expect(third.done.condensedQuestion).toContain('Radium Institute');
    expect(third.done.text).toMatch(/Marie Curie/);

    // The same question without the conversation is not condensed.
    const alone = await a.ask({ knowledgeBase: kb, question: 'When was it founded?' });
    expect(alone.condensedQuestion).toBe('When was it founded?');
    expect(alone.chatId).not.toBe(chatId);
  });

  it('lists conversations newest first, a page at a time and per knowledge base, and shows one with its messages and citations', async () => {
    const newest = (await a.ask({ knowledgeBase: kb, question: 'What is polonium?' })).chatId;
    const all = await a.listChats();
    expect(all.chats[0]!.id).toBe(newest);
    const conversation = all.chats.find((c) => c.id === chatId)!;
    expect(conversation).toMatchObject({ title: 'Who founded the Radium Institute?', messageCount: 6, engine: '' });

    const paged: string[] = [];
    let pageToken = '';
    do {
      const page = await a.listChats({ pageSize: 1, pageToken });
      expect(page.chats.length).toBeLessThanOrEqual(1);
      paged.push(...page.chats.map((c) => c.id));
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
    expect(paged).toEqual(all.chats.map((c) => c.id));
    expect((await a.listChats({ knowledgeBase: 'empty' })).chats).toEqual([]);
    expect((await a.listChats({ knowledgeBase: kb })).chats.map((c) => c.id)).toEqual(all.chats.map((c) => c.id));

    const detail = await a.getChat(chatId);
    expect(detail.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    expect(detail.messages[0]).toMatchObject({ content: 'Who founded the Radium Institute?', condensedQuestion: '' });
    expect(detail.messages[2]).toMatchObject({ content: 'When was it founded?', condensedQuestion: expect.stringContaining('Radium Institute') });
    expect(detail.messages[3]!.citations.map((c) => c.sourceUri)).toContain('examples/radium-institute.txt');
    expect(detail.messages[3]!.citations[0]!.index).toBeGreaterThan(0);

    const shown = await cli('chats', 'show', chatId);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('Q: When was it founded?');
    expect(shown.stdout).toMatch(/\(condensed: When was it founded\? \(.*Radium Institute/);
    expect((await cli('chats')).stdout).toContain(chatId);
  });

  it("keeps conversations per tenant: another tenant's chat id is not found, continued or deleted", async () => {
    expect(await grpcCode(b.getChat(chatId))).toMatchObject({ code: status.NOT_FOUND, details: expect.stringContaining('not found') });
    expect(await grpcCode(b.ask({ question: 'And then?', chatId }))).toMatchObject({ code: status.NOT_FOUND });
    expect(await grpcCode(b.deleteChat(chatId))).toMatchObject({ code: status.NOT_FOUND });
    expect((await b.listChats()).chats).toEqual([]);
    expect((await a.getChat(chatId)).messages).toHaveLength(6);
    expect(await grpcCode(a.ask({ question: 'And then?', chatId: 'no-such-chat' }))).toMatchObject({ code: status.NOT_FOUND, details: 'chat "no-such-chat" not found' });
    expect(await grpcCode(a.ask({ knowledgeBase: 'empty', question: 'And then?', chatId }))).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining('another knowledge base') });
  });

  it('deletes a conversation with its messages', async () => {
    expect(await a.deleteChat(chatId)).toEqual({ deleted: true });
    expect(await grpcCode(a.getChat(chatId))).toMatchObject({ code: status.NOT_FOUND });
    expect((await a.listChats()).chats.map((c) => c.id)).not.toContain(chatId);
    expect(await grpcCode(a.ask({ question: 'And then?', chatId }))).toMatchObject({ code: status.NOT_FOUND });
    expect(await grpcCode(a.deleteChat(chatId))).toMatchObject({ code: status.NOT_FOUND });
  });

  it('runs a chat engine a request names: its knowledge base, mode and k, and graph context; request fields win', async () => {
    const created = await a.createChatEngine({ name: 'vector-2', description: 'two sources', knowledgeBases: [kb], mode: 'vector', topK: 2, showGraphContext: true });
    expect(created).toMatchObject({ name: 'vector-2', knowledgeBases: [kb], mode: 'vector', topK: 2, showGraphContext: true });
    expect(created.createdAt).not.toBe('');
    const question = 'What did Marie Curie discover and which institute did she direct?';

    const plain = await a.ask({ knowledgeBase: kb, question, topK: 5 });
    expect(plain.graphContext).toBe('');
    const engined = await chatTurn(a, { question, engine: 'vector-2' });
    expect(engined.done.citations.length).toBeGreaterThan(0);
    expect(engined.done.citations.length).toBeLessThanOrEqual(2);
    expect(engined.done.citations.every((c) => c.index <= 2)).toBe(true);
    expect(engined.done.graphContext).not.toBe('');
    expect(engined.stages.get('generation')).toBe('2 sources');
    // top_k of the request overrides the engine's.
    const one = await chatTurn(a, { question, engine: 'vector-2', topK: 1 });
    expect(one.stages.get('generation')).toBe('1 sources');
    expect((await a.getChat(engined.done.chatId)).chat!.engine).toBe('vector-2');
    // A knowledge base outside the engine's list is refused; another tenant has no such engine.
    expect(await grpcCode(a.ask({ knowledgeBase: 'empty', question, engine: 'vector-2' }))).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining('not one of chat engine "vector-2"') });
    expect(await grpcCode(b.ask({ knowledgeBase: kb, question, engine: 'vector-2' }))).toMatchObject({ code: status.NOT_FOUND });
    expect(await grpcCode(b.getChatEngine('vector-2'))).toMatchObject({ code: status.NOT_FOUND });

    const updated = await a.updateChatEngine('vector-2', { ...created, topK: 3, showGraphContext: false });
    expect(updated).toMatchObject({ name: 'vector-2', topK: 3, showGraphContext: false, mode: 'vector' });
    const after = await chatTurn(a, { question, engine: 'vector-2' });
    expect(after.stages.get('generation')).toBe('3 sources');
    expect(after.done.graphContext).toBe('');
    expect((await a.listChatEngines()).engines.map((e) => e.name)).toEqual(['vector-2']);
    expect(await a.deleteChatEngine('vector-2')).toEqual({ deleted: true });
    expect(await grpcCode(a.ask({ question, engine: 'vector-2' }))).toMatchObject({ code: status.NOT_FOUND, details: 'chat engine "vector-2" not found' });
  });

  it('edits chat engines over the CLI and REST', async () => {
    const created = await cli('engines', 'create', 'docs', '--kb', kb, '--mode', 'fulltext', '--top-k', '2', '--system-prompt', 'Answer like a librarian.', '--show-graph');
    expect(created).toMatchObject({ code: 0, stdout: expect.stringContaining('created docs') });
    expect((await a.getChatEngine('docs')).systemPrompt).toBe('Answer like a librarian.');
    const updated = await cli('engines', 'update', 'docs', '--top-k', '4', '--no-show-graph');
    expect(updated.code).toBe(0);
    expect(await a.getChatEngine('docs')).toMatchObject({ topK: 4, showGraphContext: false, mode: 'fulltext', systemPrompt: 'Answer like a librarian.', knowledgeBases: [kb] });
    expect((await cli('engines')).stdout).toMatch(/NAME\s+KNOWLEDGE BASES\s+MODE[\s\S]*docs\s+curie\s+fulltext\s+4/);
    const asked = await cli('ask', 'Who directed the Radium Institute?', '--engine', 'docs');
    expect(asked.code).toBe(0);
    const chat = /chat: ([0-9a-f-]{36})/.exec(asked.stdout)![1]!;
    const followUp = await cli('ask', 'When was it founded?', '--chat', chat);
    expect(followUp.stdout).toMatch(/\(asked as: When was it founded\? \(.*Radium Institute/);
    expect((await cli('engines', 'create', 'bad name')).stderr).toMatch(/chat engine name "bad name" is invalid/);

    const headers = { authorization: 'Bearer key-of-a', 'content-type': 'application/json' };
    const rest = (path: string, init: RequestInit = {}) => fetch(`${server.httpUrl}${path}`, { ...init, headers });
    const made = await rest('/api/v1/chat-engines', { method: 'POST', body: JSON.stringify({ engine: { name: 'rest', knowledgeBases: [kb], topK: 1 } }) });
    expect(made.status).toBe(201);
    expect(await (await rest('/api/v1/chat-engines/rest')).json()).toMatchObject({ name: 'rest', topK: 1 });
    const patched = await rest('/api/v1/chat-engines/rest', { method: 'PATCH', body: JSON.stringify({ engine: { knowledgeBases: [kb], topK: 2 } }) });
    expect(await patched.json()).toMatchObject({ name: 'rest', topK: 2 });
    const listed = (await (await rest('/api/v1/chats?pageSize=2')).json()) as { chats: Array<{ id: string }>; nextPageToken: string };
    expect(listed.chats).toHaveLength(2);
    expect(listed.nextPageToken).not.toBe('');
    expect(((await (await rest(`/api/v1/chats/${chat}`)).json()) as { messages: unknown[] }).messages).toHaveLength(4);
    expect((await rest(`/api/v1/chats/${chat}`, { method: 'DELETE' })).status).toBe(200);
    expect((await rest(`/api/v1/chats/${chat}`)).status).toBe(404);
    expect((await rest('/api/v1/chat-engines/rest', { method: 'DELETE' })).status).toBe(200);
    expect((await rest('/api/v1/chat-engines/nope')).status).toBe(404);
  });
});
