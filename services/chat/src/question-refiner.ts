import type { v1 } from '@trellis/contracts';
import { refineQuestionWithEntities } from '@trellis/models';
import type { ChatModel } from '@trellis/models';

/** Rewrites the question for chunk retrieval, using the graph and the conversation. */
export interface QuestionRefiner {
  refine(question: string, history: readonly v1.ChatMessage[], graph: v1.GraphContext): Promise<string>;
}

export class GraphQuestionRefiner implements QuestionRefiner {
  async refine(question: string, _history: readonly v1.ChatMessage[], graph: v1.GraphContext): Promise<string> {
    return refineQuestionWithEntities(question, graph.entities.map((e) => e.name));
  }
}

const REFINE_PROMPT = `Rewrite the user's latest question into one self-contained search query for a document search engine.
Resolve pronouns from the conversation, and add the names of entities from the knowledge graph that the answer likely involves.
Reply with the query only.`;

export class LlmQuestionRefiner implements QuestionRefiner {
  constructor(private readonly llm: ChatModel) {}

  async refine(question: string, history: readonly v1.ChatMessage[], graph: v1.GraphContext): Promise<string> {
    const conversation = history.slice(-6).map((m) => `${m.role}: ${m.content}`).join('\n');
    const reply = await this.llm.complete(
      [
        { role: 'system', content: REFINE_PROMPT },
        { role: 'user', content: `Knowledge graph:\n${graph.rendered || '(empty)'}\n\nConversation:\n${conversation || '(none)'}\n\nQuestion: ${question}` },
      ],
      { temperature: 0, maxTokens: 200 },
    );
    const refined = reply.trim().replace(/^["']|["']$/g, '');
    return refined === '' || refined.length > 2000 ? question : refined;
  }
}
