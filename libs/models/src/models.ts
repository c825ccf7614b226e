import type { TrellisConfig } from '@trellis/config';
import type { ChatModel } from './chat-model';
import type { EmbeddingProvider } from './embedding-provider';
import { LocalHashEmbedder } from './local-hash-embedder';
import { HttpReranker } from './http-reranker';
import { OpenAiChatModel, OpenAiEmbedder, createOpenAiClient } from './openai-models';
import { LocalOverlapReranker } from './reranker';
import type { RerankerProvider } from './reranker';

/** The models a process uses. `llm` is null when no OpenAI-compatible endpoint is configured. */
export interface Models {
  readonly embedder: EmbeddingProvider;
  readonly llm: ChatModel | null;
  /** Re-scores oversampled retrieval candidates; null unless TRELLIS_RERANKER is set. */
  readonly reranker: RerankerProvider | null;
}

export const MODELS = Symbol.for('trellis.models');

/** Local models when no endpoint is configured; otherwise the endpoint does embeddings and chat. */
export function createModels(config: TrellisConfig): Models {
  const reranker = createReranker(config);
  if (!config.openai.enabled) return { embedder: new LocalHashEmbedder(), llm: null, reranker };
  const client = createOpenAiClient(config.openai);
  return {
    embedder: new OpenAiEmbedder(client, config.openai.embeddingModel, config.openai.embeddingDimensions),
    llm: new OpenAiChatModel(client, config.openai.chatModel),
    reranker,
  };
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
