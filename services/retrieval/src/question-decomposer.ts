import type { ChatModel } from '@trellis/models';

/** Sub-questions asked of the model at most; more rarely help and each costs a retrieval. */
export const MAX_SUB_QUESTIONS = 3;

const SCHEMA = {
  name: 'sub_questions',
  schema: {
    type: 'object',
    properties: { sub_questions: { type: 'array', items: { type: 'string' }, maxItems: MAX_SUB_QUESTIONS } },
    required: ['sub_questions'],
    additionalProperties: false,
  },
};

const SYSTEM = `Split the user's question into at most ${MAX_SUB_QUESTIONS} simpler questions that can each be answered from one passage and together answer it. If it is already simple, return it alone. Reply with JSON {"sub_questions": [...]}.`;

/**
 * Decomposition of a multi-part question with a language model (one structured-output call).
 * A model failure or an unusable reply leaves the question undivided: retrieval still works.
 */
export class QuestionDecomposer {
  constructor(private readonly llm: ChatModel) {}

  async decompose(question: string, signal?: AbortSignal): Promise<string[]> {
    let reply: string;
    try {
      reply = await this.llm.complete(
        [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: question },
        ],
        { jsonSchema: SCHEMA, temperature: 0, maxTokens: 300, signal },
      );
    } catch {
      return [];
    }
    return parseSubQuestions(reply, question);
  }
}

/** The distinct, non-empty sub-questions of a reply that differ from the question itself. */
export function parseSubQuestions(reply: string, question: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(reply);
  } catch {
    return [];
  }
  const list = (parsed as { sub_questions?: unknown }).sub_questions;
  if (!Array.isArray(list)) return [];
  const seen = new Set([question.trim().toLowerCase()]);
  const out: string[] = [];
  for (const item of list) {
    if (typeof item !== 'string') continue;
    const text = item.trim().slice(0, 1000);
    if (text === '' || seen.has(text.toLowerCase())) continue;
    seen.add(text.toLowerCase());
    out.push(text);
    if (out.length >= MAX_SUB_QUESTIONS) break;
  }
  return out;
}
