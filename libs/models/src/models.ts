import type { TrellisConfig } from '@trellis/config';
import { BudgetedChatModel } from './budgeted-chat-model';
import type { CallBudget } from './budgeted-chat-model';
import type { ChatModel } from './chat-model';
import type { EmbeddingProvider } from './embedding-provider';
import { LocalHashEmbedder } from './local-hash-embedder';
import { HttpReranker } from './http-reranker';
import { OpenAiChatModel, OpenAiEmbedder, createOpenAiClient } from './openai-models';
import type { ModelCallObserver } from './openai-models';
import { LocalOverlapReranker } from './reranker';
import type { RerankerProvider } from './reranker';

/** The models a process uses. `llm` is null when no OpenAI-compatible endpoint is configured. */
export interface Models {
  readonly embedder: EmbeddingProvider;
  readonly llm: ChatModel | null;
  /** Re-scores oversampled retrieval candidates; null unless TRELLIS_RERANKER is set. */
  readonly reranker: RerankerProvider | null;
  /**
   * The chat model of that name on the same endpoint (a knowledge base's own LLM model), with
   * the same observer and call budget; null when no endpoint is configured.
   */
  chatModel(model: string): ChatModel | null;
}

export interface ModelOptions {
  /** Receives every provider call, for metrics. */
  readonly observer?: ModelCallObserver;
  /** Admission of chat calls (concurrency and rate limits shared by the deployment). */
  readonly budget?: CallBudget;
}

export const MODELS = Symbol.for('trellis.models');

/** Local models when no endpoint is configured; otherwise the endpoint does embeddings and chat. */
export function createModels(config: TrellisConfig, options: ModelOptions = {}): Models {
  const reranker = createReranker(config);
  if (!config.openai.enabled) return { embedder: new LocalHashEmbedder(), llm: null, reranker, chatModel: () => null };
  const client = createOpenAiClient(config.openai);
  const embedder = new OpenAiEmbedder(client, config.openai.embeddingModel, config.openai.embeddingDimensions);
  if (options.observer) embedder.observe(options.observer);
  const chatModels = new Map<string, ChatModel>();
  const chatModel = (name: string): ChatModel => {
    let model = chatModels.get(name);
    if (model === undefined) {
      const openAi = new OpenAiChatModel(client, name);
      if (options.observer) openAi.observe(options.observer);
      model = options.budget ? new BudgetedChatModel(openAi, options.budget) : openAi;
      chatModels.set(name, model);
    }
    return model;
  };
  return { embedder, llm: chatModel(config.openai.chatModel), reranker, chatModel };
}

function createReranker(config: TrellisConfig): RerankerProvider | null {
  const { kind, url, model, apiKey } = config.reranker;
  switch (kind) {
    case 'none':
      return null;
    case 'local':
      return new LocalOverlapReranker();
    case 'http':
      return new HttpReranker({ baseUrl: url!, model, apiKey, timeoutMs: config.openai.timeoutMs });
  }
}
