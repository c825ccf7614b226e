import type { TrellisConfig } from '@trellis/config';
import type { ChatModel } from './chat-model';
import type { EmbeddingProvider } from './embedding-provider';
import { LocalHashEmbedder } from './local-hash-embedder';
import { OpenAiChatModel, OpenAiEmbedder, createOpenAiClient } from './openai-models';

/** The models a process uses. `llm` is null when no OpenAI-compatible endpoint is configured. */
export interface Models {
  readonly embedder: EmbeddingProvider;
  readonly llm: ChatModel | null;
}

export const MODELS = Symbol.for('trellis.models');

/** Local models when no endpoint is configured; otherwise the endpoint does embeddings and chat. */
export function createModels(config: TrellisConfig): Models {
  if (!config.openai.enabled) return { embedder: new LocalHashEmbedder(), llm: null };
  const client = createOpenAiClient(config.openai);
  return {
    embedder: new OpenAiEmbedder(client, config.openai.embeddingModel, config.openai.embeddingDimensions),
    llm: new OpenAiChatModel(client, config.openai.chatModel),
  };
}
