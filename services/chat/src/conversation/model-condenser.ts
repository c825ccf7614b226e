import type { v1 } from '@trellis/contracts';
import type { ChatModel } from '@trellis/models';
import { fullTextTerms } from '@trellis/text-search';
import type { Condensed, QuestionCondenser } from './rule-condenser';

/** The default instructions of the model's rewrite (a chat engine may replace them). */
export const CONDENSE_PROMPT = `Rewrite the user's follow-up question so that it can be understood without the conversation before it.
Replace pronouns and references with the names they stand for, and fill in what an elliptical question leaves out.
Keep the question's meaning and language. If it already stands alone, repeat it unchanged.
Reply with the rewritten question only, on one line.`;
const MAX_REPLY_TOKENS = 200;
/** Longer than this is a model answering, not rewriting. */
const MAX_CONDENSED_CHARS = 1000;

/**
 * The condensation with a language model (the process's budgeted, metered model, as every other
 * call): the conversation and the follow-up in, the standalone question out. A reply that is not
 * a rewrite — empty, several lines, markup or JSON, far too long, sharing no word with the
 * conversation — or one that does not come in time, or a failed call, falls back to `fallback`
 * (the deterministic rewrite), and says why.
 */
export class ModelQuestionCondenser implements QuestionCondenser {
  constructor(
    private readonly llm: ChatModel,
    private readonly fallback: QuestionCondenser,
    private readonly timeoutMs: number,
  ) {}

  async condense(question: string, history: readonly v1.ChatMessage[], prompt = CONDENSE_PROMPT): Promise<Condensed> {
    if (!history.some((m) => m.role === 'user')) return { question, method: 'unchanged' };
    const conversation = history.map((m) => `${m.role}: ${m.content}`).join('\n');
    let reply: string;
    try {
      reply = await this.llm.complete(
        [
          { role: 'system', content: prompt },
          { role: 'user', content: `Conversation:\n${conversation}\n\nFollow-up question: ${question}` },
        ],
        { temperature: 0, maxTokens: MAX_REPLY_TOKENS, signal: AbortSignal.timeout(this.timeoutMs) },
      );
    } catch (error) {
      return this.fallBack(question, history, error instanceof Error && /abort|timeout/i.test(`${error.name} ${error.message}`) ? `no reply within ${this.timeoutMs} ms` : 'the model call failed');
    }
    const rewritten = cleaned(reply);
    const problem = unusable(rewritten, question, conversation);
    return problem === null ? { question: rewritten, method: rewritten === question ? 'unchanged' : 'model' } : this.fallBack(question, history, problem);
  }

  private async fallBack(question: string, history: readonly v1.ChatMessage[], reason: string): Promise<Condensed> {
    const condensed = await this.fallback.condense(question, history);
    return { ...condensed, fallbackReason: reason };
  }
}

/** The reply without quotes or a label the model put around it. */
function cleaned(reply: string): string {
  return reply
    .trim()
    .replace(/^(standalone question|rewritten question|question)\s*:\s*/i, '')
    .replace(/^["'“](.*)["'”]$/s, '$1')
    .trim();
}

/** Why `rewritten` is not a rewrite of the question, or null when it is one. */
function unusable(rewritten: string, question: string, conversation: string): string | null {
  if (rewritten === '') return 'the model replied with nothing';
  if (/\n/.test(rewritten)) return 'the model replied with several lines';
  if (rewritten.length > Math.max(MAX_CONDENSED_CHARS, question.length * 2)) return 'the model replied at length';
  if (/^[{[<`]/.test(rewritten)) return 'the model replied with markup';
  const known = new Set(`${question} ${conversation}`.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  const words = fullTextTerms(rewritten);
  if (words.length > 0 && !words.some((w) => known.has(w))) return 'the model reply shares no word with the conversation';
  return null;
}
