import { randomUUID } from 'node:crypto';
import { TrellisError } from '@trellis/contracts';
import type { TenantScope, v1 } from '@trellis/contracts';
import { kbScope, requireKnowledgeBase } from '@trellis/storage';
import type { TrellisRepositories } from '@trellis/storage';
import type { AnswerComposer } from './answer-composer';
import type { QuestionRefiner } from './question-refiner';
import type { RetrievalPort } from './retrieval-port';

const MAX_QUESTION_CHARS = 8000;
const DEFAULT_SOURCES = 5;
const MAX_SOURCES = 50;
const SNIPPET_CHARS = 240;

/**
 * One chat turn: graph retrieval → question refinement → chunk retrieval → answer, streamed
 * as events (stage changes, tokens, the citations the answer uses, and the final answer).
 * The turn is saved to the chat's history.
 */
export class ChatEngine {
  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'chats'>,
    private readonly retrieval: RetrievalPort,
    private readonly refiner: QuestionRefiner,
    private readonly composer: AnswerComposer,
  ) {}

  async *chat(tenant: TenantScope, request: v1.ChatRequest): AsyncGenerator<v1.ChatEvent> {
    const question = request.question.trim();
    if (question === '') throw TrellisError.invalid('question is empty');
    if (question.length > MAX_QUESTION_CHARS) throw TrellisError.invalid(`question is longer than ${MAX_QUESTION_CHARS} characters`);
    if (request.topK > MAX_SOURCES) throw TrellisError.invalid(`top_k must be at most ${MAX_SOURCES}`);
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, request.knowledgeBase);

    yield stage('graph_retrieval');
    const graph = await this.retrieval.retrieveGraph(tenant, { knowledgeBase: kb.id, query: question, depth: 0, maxRelationships: 0 });
    yield stage('refinement', `${graph.relationships.length} relationships`);
    const refined = await this.refiner.refine(question, request.history, graph);
    yield stage('chunk_retrieval', refined);
    const { chunks } = await this.retrieval.retrieveChunks(tenant, {
      knowledgeBase: kb.id,
      query: question,
      expansion: refined === question ? '' : refined,
      topK: request.topK || DEFAULT_SOURCES,
      mode: 'hybrid',
      documentIds: [],
      additionalKnowledgeBases: [],
    });
    yield stage('generation', `${chunks.length} sources`);

    let text = '';
    for await (const token of this.composer.compose(question, request.history, chunks, graph.rendered)) {
      text += token;
      yield { token };
    }
    const citations = citationsIn(text, chunks);
    for (const citation of citations) yield { citation };
    const chatId = request.chatId || randomUUID();
    await this.repos.chats.saveChatTurn(kbScope(kb), { chatId, question, answer: text, citations });
    yield { done: { chatId, text, citations, refinedQuestion: refined } };
  }

  /** The same turn, collected. */
  async ask(tenant: TenantScope, request: v1.ChatRequest): Promise<v1.Answer> {
    for await (const event of this.chat(tenant, request)) if (event.done) return event.done;
    throw new Error('chat ended without an answer');
  }
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
    });
  }
  return citations;
}
