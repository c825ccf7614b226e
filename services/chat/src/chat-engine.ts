import { randomUUID } from 'node:crypto';
import { TrellisError, validateChatHistory } from '@trellis/contracts';
import type { TenantScope, v1 } from '@trellis/contracts';
import type { ChatRepository } from '@trellis/storage';
import type { AnswerComposer } from './answer-composer';
import { belowRelevanceFloor, nothingRelevantAnswer } from './relevance-floor';
import { communityCitationsIn } from './global-answer-composer';
import type { GlobalAnswerComposer } from './global-answer-composer';
import type { RetrievalPort } from './retrieval-port';

const MAX_QUESTION_CHARS = 8000;
const DEFAULT_SOURCES = 5;
const MAX_SOURCES = 50;
const MAX_CHAT_ID_CHARS = 128;
const SNIPPET_CHARS = 240;
/** The most recent turns sent with Retrieve (its limit) for the refinement to read. */
const REFINEMENT_HISTORY = 20;
const EMPTY_GRAPH: v1.GraphContext = { entities: [], relationships: [], rendered: '' };
const SCOPES = ['', 'local', 'global', 'auto'];

/**
 * How the question is refined with the graph before chunk retrieval: `model` (a language
 * model rewrites it from the graph and the conversation) or `entities` (the names of the
 * entities the graph found are added).
 */
export type QuestionRefinement = 'model' | 'entities';

/**
 * One chat turn: graph retrieval → question refinement → chunk retrieval (one Retrieve call:
 * the graph found first is the context of the refinement, of the chunk ranking and of the
 * answer) → answer, streamed as events (stage changes, tokens, the citations the answer uses,
 * and the final answer). The turn is saved to the chat's history. When even the best hit is
 * below the relevance floor, the answer says the knowledge base has nothing on the question
 * and cites the closest sources instead.
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
  ) {}

  async *chat(tenant: TenantScope, request: v1.ChatRequest): AsyncGenerator<v1.ChatEvent> {
    const question = request.question.trim();
    if (question === '') throw TrellisError.invalid('question is empty');
    if (question.length > MAX_QUESTION_CHARS) throw TrellisError.invalid(`question is longer than ${MAX_QUESTION_CHARS} characters`);
    if (request.topK > MAX_SOURCES) throw TrellisError.invalid(`top_k must be at most ${MAX_SOURCES}`);
    validateChatHistory(request.history);
    if (request.chatId.length > MAX_CHAT_ID_CHARS) throw TrellisError.invalid(`chat_id is longer than ${MAX_CHAT_ID_CHARS} characters`);
    if (!SCOPES.includes(request.scope)) throw TrellisError.invalid(`unknown scope "${request.scope}": use local, global or auto`);
    const scoped = request.scope === 'global' || request.scope === 'auto';

    yield stage('graph_retrieval');
    // Retrieval looks the knowledge base up (NOT_FOUND when missing) and says which it is.
    const retrieved = await this.retrieval.retrieve(tenant, {
      knowledgeBase: request.knowledgeBase,
      query: question,
      topK: request.topK || DEFAULT_SOURCES,
      mode: 'hybrid',
      depth: 0,
      refinement: this.refinement,
      history: request.history.slice(-REFINEMENT_HISTORY),
      ...(scoped ? { scope: request.scope } : {}),
    });
    const route = { route: retrieved.route, routeReason: retrieved.routeReason };
    if (scoped) yield stage('routing', `${retrieved.route}: ${retrieved.routeReason}`);
    if (retrieved.route === 'global') {
      yield* this.globalTurn(tenant, request, question, retrieved);
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
    const tokens = nothingRelevant ? wordsOf(nothingRelevantAnswer(chunks)) : this.composer.compose(question, request.history, chunks, graph.rendered);
    for await (const token of tokens) {
      text += token;
      yield { token };
    }
    const citations = citationsIn(text, chunks);
    for (const citation of citations) yield { citation };
    const chatId = request.chatId || randomUUID();
    await this.repos.chats.saveChatTurn({ tenantId: tenant.tenantId, kbId: retrieved.knowledgeBaseId }, { chatId, question, answer: text, citations });
    yield { done: { chatId, text, citations, refinedQuestion: refined, ...route } };
  }

  /** A corpus-wide answer from the community reports retrieval ranked, citing communities and their chunks. */
  private async *globalTurn(tenant: TenantScope, request: v1.ChatRequest, question: string, retrieved: v1.RetrieveResponse): AsyncGenerator<v1.ChatEvent> {
    yield stage('community_retrieval', `${retrieved.communities.length} communities`);
    yield stage('generation', `${retrieved.communities.length} community reports`);
    let text = '';
    for await (const token of this.globalComposer.compose(question, retrieved.communities)) {
      text += token;
      yield { token };
    }
    const citations = communityCitationsIn(text, retrieved.communities, retrieved.chunks);
    for (const citation of citations) yield { citation };
    const chatId = request.chatId || randomUUID();
    await this.repos.chats.saveChatTurn({ tenantId: tenant.tenantId, kbId: retrieved.knowledgeBaseId }, { chatId, question, answer: text, citations });
    yield { done: { chatId, text, citations, refinedQuestion: question, route: retrieved.route, routeReason: retrieved.routeReason } };
  }

  /** The same turn, collected. */
  async ask(tenant: TenantScope, request: v1.ChatRequest): Promise<v1.Answer> {
    for await (const event of this.chat(tenant, request)) if (event.done) return event.done;
    throw new Error('chat ended without an answer');
  }
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
