import { randomUUID } from 'node:crypto';
import { TrellisError, validateChatHistory } from '@trellis/contracts';
import type { TenantScope, v1 } from '@trellis/contracts';
import type { ChatEngineSettings, ChatRepository } from '@trellis/storage';
import type { AnswerComposer } from './answer-composer';
import { belowRelevanceFloor, nothingRelevantAnswer } from './relevance-floor';
import { communityCitationsIn } from './global-answer-composer';
import type { GlobalAnswerComposer } from './global-answer-composer';
import type { RetrievalPort } from './retrieval-port';
import { MAX_CHAT_ID_CHARS } from './conversation/conversations';
import type { Conversations } from './conversation/conversations';
import { DEFAULT_HISTORY_BOUNDS, boundHistory } from './conversation/history-bounds';
import { RuleQuestionCondenser } from './conversation/rule-condenser';
import type { Condensed, QuestionCondenser } from './conversation/rule-condenser';
import type { ChatEngineCatalog } from './engines/chat-engine-catalog';
import { turnSettings } from './engines/turn-settings';
import type { TurnSettings } from './engines/turn-settings';

const MAX_QUESTION_CHARS = 8000;
const MAX_SOURCES = 50;
const SNIPPET_CHARS = 240;
const EMPTY_GRAPH: v1.GraphContext = { entities: [], relationships: [], rendered: '' };
const SCOPES = ['', 'local', 'global', 'auto'];

/**
 * How the question is refined with the graph before chunk retrieval: `model` (a language
 * model rewrites it from the graph and the conversation) or `entities` (the names of the
 * entities the graph found are added).
 */
export type QuestionRefinement = 'model' | 'entities';

/**
 * What a turn reads besides the request: saved conversations (`chat_id`), bounded; the
 * condensation of a follow-up with them; chat engines (`engine`). Without `conversations` a chat
 * id is not looked up, and without `engines` no engine can be named (unit tests of the turn alone).
 */
export interface TurnSupport {
  readonly conversations: Pick<Conversations, 'continued' | 'bound'> | null;
  readonly condenser: QuestionCondenser;
  readonly engines: Pick<ChatEngineCatalog, 'settingsFor'> | null;
}

const TURN_ALONE: TurnSupport = { conversations: null, condenser: new RuleQuestionCondenser(), engines: null };

/**
 * One chat turn: condensation of a follow-up with the conversation (saved under `chat_id`, and
 * the request's history) → graph retrieval → question refinement → chunk retrieval (one Retrieve
 * call: the graph found first is the context of the refinement, of the chunk ranking and of the
 * answer) → answer, streamed as events (stage changes, tokens, the citations the answer uses,
 * and the final answer). The turn is saved to the chat's history. When even the best hit is
 * below the relevance floor, the answer says the knowledge base has nothing on the question
 * and cites the closest sources instead. A named chat engine supplies what the request leaves out.
 */
export class ChatEngine {
  constructor(
    private readonly repos: { readonly chats: Pick<ChatRepository, 'saveChatTurn'> },
    private readonly retrieval: RetrievalPort,
    private readonly refinement: QuestionRefinement,
    private readonly composer: AnswerComposer,
    private readonly globalComposer: GlobalAnswerComposer,
    /** Dense similarity the best hit needs for an answer to be composed (relevance-floor.ts). */
    private readonly relevanceFloor?: number,
    private readonly support: TurnSupport = TURN_ALONE,
  ) {}

  async *chat(tenant: TenantScope, request: v1.ChatRequest): AsyncGenerator<v1.ChatEvent> {
    const question = request.question.trim();
    if (question === '') throw TrellisError.invalid('question is empty');
    if (question.length > MAX_QUESTION_CHARS) throw TrellisError.invalid(`question is longer than ${MAX_QUESTION_CHARS} characters`);
    if (request.topK > MAX_SOURCES) throw TrellisError.invalid(`top_k must be at most ${MAX_SOURCES}`);
    validateChatHistory(request.history);
    if (request.chatId.length > MAX_CHAT_ID_CHARS) throw TrellisError.invalid(`chat_id is longer than ${MAX_CHAT_ID_CHARS} characters`);
    if (!SCOPES.includes(request.scope)) throw TrellisError.invalid(`unknown scope "${request.scope}": use local, global or auto`);
    const engine = await this.engineOf(tenant, request.engine);
    const { chatKnowledgeBase, history } = await this.conversationOf(tenant, request);
    const settings = turnSettings(request, engine, chatKnowledgeBase);
    const scoped = settings.scope === 'global' || settings.scope === 'auto';

    let condensed: Condensed = { question, method: 'unchanged' };
    if (history.some((m) => m.role === 'user')) {
      condensed = await this.support.condenser.condense(question, history, settings.prompts.condense || undefined);
      yield stage('condensation', condensed.question);
    }
    const turn: Turn = { request, settings, question, condensedQuestion: condensed.question };

    yield stage('graph_retrieval');
    // Retrieval looks the knowledge base up (NOT_FOUND when missing) and says which it is.
    const retrieved = await this.retrieval.retrieve(tenant, {
      knowledgeBase: settings.knowledgeBase,
      query: condensed.question,
      topK: settings.topK,
      mode: settings.mode,
      depth: settings.depth,
      refinement: this.refinement,
      history,
      ...(settings.strategy ? { strategy: settings.strategy } : {}),
      ...(settings.prompts.refine ? { refinementPrompt: settings.prompts.refine } : {}),
      ...(settings.rerank ? {} : { rerank: false }),
      ...(scoped ? { scope: settings.scope } : {}),
    });
    const route = { route: retrieved.route, routeReason: retrieved.routeReason };
    if (scoped) yield stage('routing', `${retrieved.route}: ${retrieved.routeReason}`);
    if (retrieved.route === 'global') {
      yield* this.globalTurn(tenant, turn, retrieved);
      return;
    }
    const graph = retrieved.graph ?? EMPTY_GRAPH;
    const { chunks, refinedQuery: refined } = retrieved;
    yield stage('refinement', `${graph.relationships.length} relationships`);
    yield stage('chunk_retrieval', refined);
    const nothingRelevant = belowRelevanceFloor(chunks, this.relevanceFloor);
    yield stage('generation', nothingRelevant ? `nothing relevant in ${chunks.length} sources` : `${chunks.length} sources`);

    let text = '';
    // Below the floor no answer is composed from unrelated text: the closest sources are listed.
    const prompts = { system: settings.prompts.system, answer: settings.prompts.answer };
    const tokens = nothingRelevant ? wordsOf(nothingRelevantAnswer(chunks)) : this.composer.compose(condensed.question, history, chunks, graph.rendered, prompts);
    for await (const token of tokens) {
      text += token;
      yield { token };
    }
    const citations = citationsIn(text, chunks);
    for (const citation of citations) yield { citation };
    const chatId = await this.save(tenant, turn, retrieved.knowledgeBaseId, text, citations);
    const graphContext = settings.showGraphContext ? graph.rendered : '';
    yield { done: { chatId, text, citations, refinedQuestion: refined, ...route, condensedQuestion: condensed.question, graphContext } };
  }

  private async engineOf(tenant: TenantScope, name: string): Promise<(ChatEngineSettings & { name: string }) | null> {
    if (name === '') return null;
    if (this.support.engines === null) throw TrellisError.notFound(`chat engine "${name}" not found`);
    return this.support.engines.settingsFor(tenant, name);
  }

  /**
   * The history of the turn, within the bounds: a continued conversation's saved turns before the
   * request's own; and the knowledge base of the conversation, for a request that names none.
   */
  private async conversationOf(tenant: TenantScope, request: v1.ChatRequest): Promise<{ chatKnowledgeBase: string; history: v1.ChatMessage[] }> {
    const conversations = this.support.conversations;
    if (conversations === null) return { chatKnowledgeBase: '', history: boundHistory(request.history, DEFAULT_HISTORY_BOUNDS) };
    if (request.chatId === '') return { chatKnowledgeBase: '', history: conversations.bound(request.history) };
    const { chat, history } = await conversations.continued(tenant, request.chatId, request.knowledgeBase);
    return { chatKnowledgeBase: chat.kbId, history: conversations.bound([...history, ...request.history]) };
  }

  /** Saves the turn under its chat (a new one when the request named none); returns the chat id. */
  private async save(tenant: TenantScope, turn: Turn, kbId: string, answer: string, citations: v1.Citation[]): Promise<string> {
    const chatId = turn.request.chatId || randomUUID();
    await this.repos.chats.saveChatTurn(
      { tenantId: tenant.tenantId, kbId },
      { chatId, question: turn.question, answer, citations, condensedQuestion: turn.condensedQuestion, engine: turn.settings.engine },
    );
    return chatId;
  }

  /** A corpus-wide answer from the community reports retrieval ranked, citing communities and their chunks. */
  private async *globalTurn(tenant: TenantScope, turn: Turn, retrieved: v1.RetrieveResponse): AsyncGenerator<v1.ChatEvent> {
    yield stage('community_retrieval', `${retrieved.communities.length} communities`);
    yield stage('generation', `${retrieved.communities.length} community reports`);
    let text = '';
    for await (const token of this.globalComposer.compose(turn.condensedQuestion, retrieved.communities)) {
      text += token;
      yield { token };
    }
    const citations = communityCitationsIn(text, retrieved.communities, retrieved.chunks);
    for (const citation of citations) yield { citation };
    const chatId = await this.save(tenant, turn, retrieved.knowledgeBaseId, text, citations);
    const { route, routeReason } = retrieved;
    yield { done: { chatId, text, citations, refinedQuestion: turn.condensedQuestion, route, routeReason, condensedQuestion: turn.condensedQuestion, graphContext: '' } };
  }

  /** The same turn, collected. */
  async ask(tenant: TenantScope, request: v1.ChatRequest): Promise<v1.Answer> {
    for await (const event of this.chat(tenant, request)) if (event.done) return event.done;
    throw new Error('chat ended without an answer');
  }
}

/** One turn as asked and as condensed, and what it runs with. */
interface Turn {
  readonly request: v1.ChatRequest;
  readonly settings: TurnSettings;
  readonly question: string;
  readonly condensedQuestion: string;
}

function wordsOf(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [];
}

function stage(name: string, detail = ''): v1.ChatEvent {
  return { stage: { name, detail } };
}

/** The sources the answer cites with [n], in order of first citation. */
export function citationsIn(text: string, sources: readonly v1.ChunkHit[]): v1.Citation[] {
  const seen = new Set<number>();
  const citations: v1.Citation[] = [];
  for (const match of text.matchAll(/\[(\d{1,3})\]/g)) {
    const index = Number(match[1]);
    const source = sources[index - 1];
    if (source === undefined || seen.has(index)) continue;
    seen.add(index);
    citations.push({
      index,
      documentId: source.documentId,
      chunkId: source.chunkId,
      sourceUri: source.sourceUri,
      snippet: source.text.length <= SNIPPET_CHARS ? source.text : `${source.text.slice(0, SNIPPET_CHARS - 1)}…`,
      communityId: '',
      sourceChunkIds: [],
    });
  }
  return citations;
}
