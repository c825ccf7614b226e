import type { v1 } from '@trellis/contracts';
import type { ChatModel } from '@trellis/models';

const REFINE_PROMPT = `Rewrite the user's latest question into one self-contained search query for a document search engine.
Resolve pronouns from the conversation, and add the names of entities from the knowledge graph that the answer likely involves.
Reply with the query only.`;
/** Turns of the conversation the model reads. */
const HISTORY_TURNS = 6;
const MAX_REFINED_CHARS = 2000;

/**
 * The "model" refinement of Retrieve: a language model rewrites the question from the graph
 * context the walk found and the conversation so far. An empty or runaway reply keeps the
 * question as it was.
 */
export class ModelQuestionRefiner {
  constructor(private readonly llm: ChatModel) {}

  async refine(question: string, history: readonly v1.ChatMessage[], renderedGraph: string, prompt = REFINE_PROMPT): Promise<string> {
    const conversation = history.slice(-HISTORY_TURNS).map((m) => `${m.role}: ${m.content}`).join('\n');
    const reply = await this.llm.complete(
      [
        { role: 'system', content: prompt },
        { role: 'user', content: `Knowledge graph:\n${renderedGraph || '(empty)'}\n\nConversation:\n${conversation || '(none)'}\n\nQuestion: ${question}` },
      ],
      { temperature: 0, maxTokens: 200 },
    );
    const refined = reply.trim().replace(/^["']|["']$/g, '');
    return refined === '' || refined.length > MAX_REFINED_CHARS ? question : refined;
  }
}
