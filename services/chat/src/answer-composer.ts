import type { v1 } from '@trellis/contracts';
import type { ChatMessage, ChatModel, EmbeddingProvider } from '@trellis/models';
import { fullTextTerms } from '@trellis/text-search';
import { cosineSimilarity } from '@trellis/models';
import { answerPassages } from './answer-passages';
import type { AnswerPassage } from './answer-passages';

/** A chat engine's instructions for the answer's model; empty means the built-in ones. */
export interface AnswerPrompts {
  /** Replaces the system message. */
  readonly system: string;
  /** Added after the question in the user message. */
  readonly answer: string;
}

/** Writes an answer from numbered sources; yields text pieces as they are produced. */
export interface AnswerComposer {
  compose(question: string, history: readonly v1.ChatMessage[], sources: readonly v1.ChunkHit[], graphContext: string, prompts?: AnswerPrompts): AsyncIterable<string>;
}

const SENTENCES_PER_ANSWER = 3;
/** Share of the best sentence's score another sentence needs to join the answer. */
const RELEVANCE_FLOOR = 0.75;

/**
 * The answer without a language model: the sentences and code blocks of the retrieved chunks
 * that best match the question (embedding similarity plus shared words, favouring
 * better-ranked chunks), each followed by the [n] of its source; a code block is quoted whole.
 */
export class ExtractiveAnswerComposer implements AnswerComposer {
  constructor(private readonly embedder: EmbeddingProvider) {}

  async *compose(question: string, _history: readonly v1.ChatMessage[], sources: readonly v1.ChunkHit[]): AsyncIterable<string> {
    if (sources.length === 0) {
      yield 'I found nothing in this knowledge base about that.';
      return;
    }
    const candidates = sources.flatMap((source, sourceIndex) =>
      answerPassages(source.text)
        .map((passage, position) => ({ ...passage, sourceIndex, position }))
        .filter((passage) => passage.text.length >= 20),
    );
    const terms = fullTextTerms(question);
    const [questionVector, ...vectors] = await this.embedder.embed([question, ...candidates.map((c) => c.text)]);
    const scored = candidates.map((c, i) => {
      const lower = c.text.toLowerCase();
      const overlap = terms.length === 0 ? 0 : terms.filter((t) => lower.includes(t)).length / terms.length;
      const score = cosineSimilarity(questionVector!, vectors[i]!) + 0.6 * overlap + 0.15 / (1 + c.sourceIndex);
      return { ...c, score };
    });
    // The best sentence leads; others join only when nearly as relevant.
    const ranked = scored.sort((a, b) => b.score - a.score);
    const best = ranked[0]!.score;
    const chosen: typeof scored = [];
    for (const candidate of ranked) {
      if (chosen.length === SENTENCES_PER_ANSWER || candidate.score < best * RELEVANCE_FLOOR) break;
      if (!chosen.some((c) => c.text === candidate.text)) chosen.push(candidate);
    }
    for (const piece of answerText(chosen).match(/\S+\s*/g) ?? []) yield piece;
  }
}

/** Sentences run on after each other; a code block stands on lines of its own, its [n] under it. */
function answerText(chosen: readonly (AnswerPassage & { sourceIndex: number })[]): string {
  let text = '';
  let afterCode = false;
  for (const passage of chosen) {
    const cited = `${passage.text}${passage.code ? '\n' : ' '}[${passage.sourceIndex + 1}]`;
    text += text === '' ? cited : passage.code || afterCode ? `\n\n${cited}` : ` ${cited}`;
    afterCode = passage.code;
  }
  return text;
}

const SYSTEM_PROMPT = `You answer questions using only the numbered sources and the knowledge graph given to you.
Cite every statement with the number of its source in square brackets, like [1] or [2][3].
If the sources do not contain the answer, say so plainly. Be concise.`;

/** The answer from a language model, streamed, grounded in numbered sources and the graph. */
export class LlmAnswerComposer implements AnswerComposer {
  constructor(private readonly llm: ChatModel) {}

  compose(question: string, history: readonly v1.ChatMessage[], sources: readonly v1.ChunkHit[], graphContext: string, prompts?: AnswerPrompts): AsyncIterable<string> {
    const context = sources.map((s, i) => `[${i + 1}] (${s.sourceUri})\n${s.text}`).join('\n\n');
    const instructions = prompts?.answer ? `\n\n${prompts.answer}` : '';
    const messages: ChatMessage[] = [
      { role: 'system', content: prompts?.system || SYSTEM_PROMPT },
      ...history.map((m) => ({ role: m.role === 'assistant' ? ('assistant' as const) : ('user' as const), content: m.content })),
      { role: 'user', content: `Knowledge graph:\n${graphContext || '(empty)'}\n\nSources:\n${context || '(none)'}\n\nQuestion: ${question}${instructions}` },
    ];
    return this.llm.stream(messages, { temperature: 0.1 });
  }
}
